#!/bin/bash
# pip_install ARGS...: `python3 -m pip install ARGS` into the system Python at image build (as root), with
# pip itself from the distribution when the image has none. Sourced by install.sh and training/install.sh.

pip_install() {
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip
        apt-get clean
        rm -rf /var/lib/apt/lists/*
    fi
    # A CA bundle that images/build.sh mounts for builds behind a TLS-intercepting proxy (not kept).
    if [ -r /run/kompi-build/ca.crt ]; then
        export PIP_CERT=/run/kompi-build/ca.crt
    fi
    local -a pip_flags=(--no-cache-dir)
    # Debian 12's pip refuses system installs without this flag; Ubuntu 22.04's pip does not know it.
    if python3 -m pip install --help | grep -q -- --break-system-packages; then
        pip_flags+=(--break-system-packages)
    fi
    python3 -m pip install "${pip_flags[@]}" "$@"
}
