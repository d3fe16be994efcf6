#!/bin/bash
# Builds kompi's images with buildah (chroot isolation) and prints one line per image:
#   <flavor> <image>   e.g.  ompi5 localhost/kompi:5.0.11-bookworm-0.1.0
# The tag is <Open MPI version>-<base tag>-<kompi version>; the version is read from the built image.
# A training flavour (ompi4-torch, ompi5-torch) is PyTorch and examples/training on that kompi image,
# tagged with torch's version after it: ompi5-torch localhost/kompi:5.0.11-bookworm-0.1.0-torch2.15.0
#
# Usage: images/build.sh [--base IMAGE] [--base-tag TAG] [--repo NAME] [--uid N] [--gid N]
#                        [--ca-bundle FILE] [--force] [--push REGISTRY [--authfile FILE] [--cert-dir DIR]]
#                        [FLAVOR...]   FLAVOR: ompi4, ompi5 (the default: both), ompi4-torch, ompi5-torch
# --base defaults to localhost/debian-base:bookworm; a missing localhost/debian-base:<suite> is made
# with debootstrap (root). Every other build argument comes from kompi_components.contract.
# An image whose inputs (files under images/, build arguments, base image id) are unchanged is not
# rebuilt: the inputs' hash is stored in the label io.kompi.inputs.
# --ca-bundle (default: $PIP_CERT, else $SSL_CERT_FILE, when set) is bind-mounted into the build's RUN
# steps for pip behind a TLS-intercepting proxy; it is not copied into the image.
# --push REGISTRY (HOST[:PORT][/PATH]) pushes each image there as REGISTRY/<name>:<tag> and prints that
# name instead; --authfile and --cert-dir are podman push's (credentials; a directory with the CA as ca.crt).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bin/phases.sh
source "$here/../bin/phases.sh"  # a row per image in CI's phase table
python=${PYTHON:-python3}
base=localhost/debian-base:bookworm
base_tag=
repo=localhost/kompi
force=0
push=
push_args=()
ca_bundle=${PIP_CERT:-${SSL_CERT_FILE:-}}
flavors=()
overrides=()

log() { printf 'build.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --base) base=$2; shift 2 ;;
            --base-tag) base_tag=$2; shift 2 ;;
            --repo) repo=$2; shift 2 ;;
            --uid) overrides+=("MPI_UID=$2"); shift 2 ;;
            --gid) overrides+=("MPI_GID=$2"); shift 2 ;;
            --ca-bundle) ca_bundle=$2; shift 2 ;;
            --force) force=1; shift ;;
            --push) push=${2%/}; shift 2 ;;
            --authfile | --cert-dir) push_args+=("$1" "$2"); shift 2 ;;
            ompi4 | ompi5 | ompi4-torch | ompi5-torch) flavors+=("$1"); shift ;;
            *) die "unknown argument: $1" ;;
        esac
    done
    [ ${#flavors[@]} -gt 0 ] || flavors=(ompi4 ompi5)
    [ -n "$base_tag" ] || base_tag=${base##*:}
}

image_exists() { podman image exists "$1"; }

# localhost/debian-base:<suite> from debootstrap --variant=minbase, when it is not there yet.
ensure_base() {
    image_exists "$base" && return
    case "$base" in
        localhost/debian-base:*) ;;
        *) die "base image $base not found (pull it first, or use localhost/debian-base:<suite>)" ;;
    esac
    command -v debootstrap >/dev/null || die "debootstrap is not installed"
    local suite=${base##*:} rootfs
    rootfs=$(mktemp -d)
    log "creating $base with debootstrap $suite"
    local start
    start=$(date +%s)
    debootstrap --variant=minbase "$suite" "$rootfs" ${DEBOOTSTRAP_MIRROR:+"$DEBOOTSTRAP_MIRROR"} >&2
    tar -C "$rootfs" -c . | podman import - "$base" >&2
    rm -rf "$rootfs"
    phase_record "image: base" "$start" "$(date +%s)" "$base by debootstrap"
}

contract_args() {
    local line
    (cd "$here/.." && "$python" "$here/contract_args.py")
    for line in "${overrides[@]}"; do printf '%s\n' "$line"; done
}

# The contract lines whose names the Dockerfile declares as ARG (the rest would only draw warnings).
declared_args() {
    local declared line
    declared=" $(sed -n 's/^ARG \([A-Za-z0-9_]*\).*$/\1/p' "$1" | tr '\n' ' ') "
    while IFS= read -r line; do
        [[ $declared == *" ${line%%=*} "* ]] && printf '%s\n' "$line"
    done < <(contract_args)
    return 0
}

# Hash of everything that shapes the image: the files the build reads, this script, the arguments,
# the image it is built on.
inputs_hash() {
    local flavor=$1 from=$2
    shift 2
    {
        (cd "$here" && find "$@" build.sh -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum)
        printf 'flavor=%s\n' "$flavor"
        contract_args
        podman image inspect --format '{{.Id}}' "$from"
    } | sha256sum | cut -d' ' -f1
}

image_label() {
    podman image inspect --format "{{index .Labels \"$2\"}}" "$1" 2>/dev/null || true
}

# The Open MPI version recorded in the image at build time (from ompi_info).
image_openmpi_version() {
    local mnt version
    mnt=$(podman image mount "$1")
    version=$(cat "$mnt/usr/local/share/kompi/openmpi-version")
    podman image unmount "$1" >/dev/null
    printf '%s\n' "$version"
}

# Remove the image a rebuild replaced, once no tag or container uses it (podman refuses otherwise).
remove_replaced() {
    [ -n "$1" ] || return 0
    if [ -z "$(podman image inspect --format '{{join .RepoTags " "}}' "$1" 2>/dev/null)" ]; then
        podman rmi "$1" >/dev/null 2>&1 || true
    fi
}

# The torch version the training image installs, from its pinned requirements.
torch_version() { sed -n 's/^torch==//p' "$here/training/requirements.txt"; }

# Tag a built image, drop the one it replaced, push it when asked, and print "<flavor> <image>".
publish() {
    local flavor=$1 work_tag=$2 tag=$3 old=$4
    podman tag "$work_tag" "$tag"
    remove_replaced "$old"
    if [ -n "$push" ]; then
        local remote="$push/${repo##*/}:${tag##*:}"
        log "pushing $remote"
        podman push --quiet "${push_args[@]}" "$tag" "docker://$remote" >&2
        tag=$remote
    fi
    printf '%s %s\n' "$flavor" "$tag"
}

# ompiN-torch: examples/training and the pinned requirements on the ompiN image (built first if needed).
build_training() {
    local flavor=$1 mpi_flavor=${1%-torch} kompi_image hash work_tag old='' torch
    local -a args=()
    kompi_image=$(push='' build_flavor "$mpi_flavor" | cut -d' ' -f2)  # the local image; pushed only if asked for
    torch=$(torch_version)
    hash=$( (inputs_hash "$flavor" "$kompi_image" training scripts/pip-install.sh; cd "$here/.." && sha256sum examples/training/*) | sha256sum | cut -d' ' -f1)
    work_tag="$repo:$flavor-$base_tag"
    if [ "$force" -eq 0 ] && image_exists "$work_tag" && [ "$(image_label "$work_tag" io.kompi.inputs)" = "$hash" ]; then
        log "$work_tag is up to date"
    else
        while IFS= read -r line; do args+=(--build-arg "$line"); done < <(declared_args "$here/training/Dockerfile")
        if [ -n "$ca_bundle" ] && [ -r "$ca_bundle" ]; then
            args+=(--volume "$ca_bundle:/run/kompi-build/ca.crt:ro")
        fi
        old=$(podman image inspect --format '{{.Id}}' "$work_tag" 2>/dev/null || true)
        log "building $work_tag"
        buildah bud --isolation chroot --layers=false \
            --build-arg "KOMPI_IMAGE=$kompi_image" --build-arg "TORCH_VERSION=$torch" "${args[@]}" \
            --build-context "example=$here/../examples/training" \
            --label "io.kompi.inputs=$hash" -f "$here/training/Dockerfile" -t "$work_tag" "$here" >&2
    fi
    publish "$flavor" "$work_tag" "$kompi_image-torch$torch" "$old"
}

build_flavor() {
    local flavor=$1 hash work_tag version kompi_version tag line old=
    local -a args=()
    hash=$(inputs_hash "$flavor" "$base" base scripts)
    work_tag="$repo:$flavor-$base_tag"
    if [ "$force" -eq 0 ] && image_exists "$work_tag" && [ "$(image_label "$work_tag" io.kompi.inputs)" = "$hash" ]; then
        log "$work_tag is up to date"
    else
        while IFS= read -r line; do args+=(--build-arg "$line"); done < <(declared_args "$here/base/Dockerfile")
        if [ -n "$ca_bundle" ] && [ -r "$ca_bundle" ]; then
            args+=(--volume "$ca_bundle:/run/kompi-build/ca.crt:ro")
        fi
        old=$(podman image inspect --format '{{.Id}}' "$work_tag" 2>/dev/null || true)
        log "building $work_tag"
        buildah bud --isolation chroot --layers=false \
            --build-arg "BASE=$base" --build-arg "MPI_FLAVOR=$flavor" "${args[@]}" \
            --label "io.kompi.inputs=$hash" -f "$here/base/Dockerfile" -t "$work_tag" "$here" >&2
    fi
    version=$(image_openmpi_version "$work_tag")
    kompi_version=$(contract_args | sed -n 's/^KOMPI_VERSION=//p')
    publish "$flavor" "$work_tag" "$repo:$version-$base_tag-$kompi_version" "$old"
}

main() {
    parse_args "$@"
    ensure_base
    local flavor start
    for flavor in "${flavors[@]}"; do
        start=$(date +%s)
        case "$flavor" in
            *-torch) build_training "$flavor" ;;
            *) build_flavor "$flavor" ;;
        esac
        phase_record "image: $flavor" "$start" "$(date +%s)"
    done
}

main "$@"
