#!/usr/bin/env bash
# One-shot set-up for a fresh Debian machine: system packages (when missing), a .venv, the project with its
# test extras and the development pins. Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(
  graphviz libgraphviz-dev pkg-config gcc       # pygraphviz builds against libgraphviz
  xvfb xauth                                    # a real X window for screenshots and manual checks
  fonts-dejavu-core libfontconfig1 libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0
  libxcb-render-util0 libxcb-image0             # Qt's xcb platform plugin
  xdg-utils shared-mime-info desktop-file-utils # desktop integration (.desktop, MIME type for .pt2)
  libglib2.0-bin                                # gio: tests ask shared-mime-info what desktops see for a .pt2
  python3-venv                                  # python3 -m venv for .venv (and the tests' torch-less venv)
  chromium                                      # headless browser: tests open the HTML reports (pt2-viewer report)
  openssh-server openssh-client                 # the SSH worker's tests start their own sshd on 127.0.0.1
  patch                                         # tests apply the doctor's diffs with the standard patch tool
)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi

stamp=.venv/.pt2-viewer-setup
want=$(cat pyproject.toml requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  # compiled at install (pip's default), as this environment may forbid writing bytecode later
  # (PYTHONDONTWRITEBYTECODE): without it every process would compile torch from source on each import
  .venv/bin/python -m pip install -q -r requirements-dev.txt -e ".[test]" 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import torch, PySide6, pygraphviz, pytestqt" # fail loudly if anything is missing
  echo "$want" > "$stamp"
fi
