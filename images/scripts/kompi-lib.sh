# shellcheck shell=bash
# Shared by kompi's entrypoints (sourced). Reads the names fixed at image build, copies the SSH files
# from the read-only Secret into $HOME/.ssh with the modes sshd's StrictModes wants, writes a per-user
# sshd_config and runs sshd in the foreground as the pod's user (uid 0 is the root opt-in).

KOMPI_SHARE=${KOMPI_SHARE:-/usr/local/share/kompi}

kompi_log() { printf 'kompi: %s\n' "$*" >&2; }
kompi_die() { kompi_log "error: $*"; exit 1; }

kompi_load_contract() {
    # shellcheck source=/dev/null
    . "$KOMPI_SHARE/contract.env"
}

# The home directory of the running uid: /root for the root opt-in, else the passwd entry.
kompi_home() {
    local uid entry
    uid=$(id -u)
    if [ "$uid" -eq 0 ]; then
        printf '/root\n'
        return
    fi
    entry=$(getent passwd "$uid") ||
        kompi_die "uid $uid has no passwd entry; run as $MPI_USER (uid $MPI_UID) or as root"
    printf '%s\n' "$(cut -d: -f6 <<<"$entry")"
}

kompi_check_secret() {
    local name
    for name in "$SSH_CLIENT_KEY" "$SSH_CLIENT_PUBLIC_KEY" "$SSH_AUTHORIZED_KEYS" "$SSH_HOST_KEY" \
        "$SSH_HOST_PUBLIC_KEY" "$SSH_KNOWN_HOSTS"; do
        [ -r "$SSH_SECRET_DIR/$name" ] || kompi_die "cannot read $SSH_SECRET_DIR/$name" \
            "(the cluster's SSH Secret; a non-root pod needs fsGroup $MPI_GID to read it)"
    done
}

kompi_install_ssh_files() {
    local src=$SSH_SECRET_DIR dst=$HOME/.ssh
    install -d -m 0700 "$dst"
    install -m 0600 "$src/$SSH_CLIENT_KEY" "$dst/$SSH_CLIENT_KEY"
    install -m 0644 "$src/$SSH_CLIENT_PUBLIC_KEY" "$dst/$SSH_CLIENT_PUBLIC_KEY"
    install -m 0600 "$src/$SSH_AUTHORIZED_KEYS" "$dst/$SSH_AUTHORIZED_KEYS"
    install -m 0600 "$src/$SSH_HOST_KEY" "$dst/$SSH_HOST_KEY"
    install -m 0644 "$src/$SSH_HOST_PUBLIC_KEY" "$dst/$SSH_HOST_PUBLIC_KEY"
    install -m 0644 "$src/$SSH_KNOWN_HOSTS" "$dst/$SSH_KNOWN_HOSTS"
}

kompi_sshd_config_path() { printf '%s/.ssh/sshd_config\n' "$HOME"; }

# The container's environment that ssh sessions (and so the MPI daemons and ranks they start) must
# see as well: sshd gives sessions a fresh environment, which would lose the image's PATH and the
# pod's NCCL/GLOO/CUDA/UCX/MCA/KOMPI settings and PyTorch's rendezvous (MASTER_ADDR, MASTER_PORT).
# One SetEnv line (sshd uses only the first); values with quotes or backslashes are left out rather
# than mangled.
kompi_session_env_pattern='^(PATH|LD_LIBRARY_PATH|MASTER_ADDR|MASTER_PORT|(KOMPI|NCCL|GLOO|CUDA|NVIDIA|UCX|OMPI_MCA|PRTE_MCA|PMIX_MCA)_[A-Za-z0-9_]*)$'

kompi_setenv_line() {
    local name value line=
    while IFS= read -r name; do
        value=${!name}
        case $value in *'"'* | *\\* | *$'\n'*) continue ;; esac
        line+=" $name=\"$value\""
    done < <(compgen -e | grep -E "$kompi_session_env_pattern" | sort)
    [ -z "$line" ] || printf 'SetEnv%s\n' "$line"
}

kompi_write_sshd_config() {
    local user
    user=$(id -un)
    cat >"$(kompi_sshd_config_path)" <<CONF
# Written by kompi at container start for $user; sshd runs as this user, not as root.
Port $SSH_PORT
HostKey $HOME/.ssh/$SSH_HOST_KEY
PidFile $HOME/.ssh/sshd.pid
AuthorizedKeysFile $HOME/.ssh/$SSH_AUTHORIZED_KEYS
AllowUsers $user
StrictModes yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitEmptyPasswords no
PermitRootLogin prohibit-password
PermitUserEnvironment no
UsePAM no
X11Forwarding no
AllowAgentForwarding no
PrintMotd no
$(kompi_setenv_line)
CONF
}

# Everything an entrypoint needs before sshd starts.
kompi_prepare() {
    kompi_load_contract
    HOME=$(kompi_home)
    export HOME
    kompi_check_secret
    kompi_install_ssh_files
    kompi_write_sshd_config
    if [ "$(id -u)" -eq 0 ]; then
        install -d -m 0755 /run/sshd # privilege separation directory, root sshd only
    fi
}

# sshd in the foreground, logging to stderr; exec so that it is the process that gets the signals.
kompi_exec_sshd() {
    kompi_log "starting sshd on port $SSH_PORT as $(id -un) (uid $(id -u))"
    exec /usr/sbin/sshd -D -e -f "$(kompi_sshd_config_path)"
}
