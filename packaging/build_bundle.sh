#!/usr/bin/env bash
# Build the one-folder bundle dist/pt2-viewer/ (GUI without torch) and dist/pt2-viewer-VERSION-linux-ARCH.tar.gz.
# Called by `make package`. Installs PyInstaller into .venv on first use, then checks the result: the bundle starts,
# holds no torch, and carries the worker sources and the desktop files. See packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
PYINSTALLER_SPEC="pyinstaller>=6.6,<7"
if ! "$PY" -m PyInstaller --version >/dev/null 2>&1; then
  echo "build_bundle: installing PyInstaller into .venv"
  "$PY" -m pip install -q "$PYINSTALLER_SPEC"
fi

"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/pt2-viewer.spec

BUNDLE=dist/pt2-viewer
fail() { echo "build_bundle: $*" >&2; exit 1; }
[ -x "$BUNDLE/pt2-viewer" ] || fail "$BUNDLE/pt2-viewer was not built"
QT_QPA_PLATFORM=offscreen "$BUNDLE/pt2-viewer" --help | grep -q -- "--install-desktop" \
  || fail "the bundle does not start: run $BUNDLE/pt2-viewer --help to see why"
if find "$BUNDLE" -path "*/torch/*" -print -quit | grep -q .; then
  fail "torch ended up in the bundle; add what pulled it in to EXCLUDES in packaging/pt2-viewer.spec"
fi
[ -f "$BUNDLE/_internal/pysrc/core/worker/__main__.py" ] || fail "the worker sources (pysrc/core) are missing"
[ -f "$BUNDLE/_internal/packaging/pt2-viewer.desktop" ] || fail "the desktop files are missing"

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
ARCHIVE="dist/pt2-viewer-$VERSION-linux-$(uname -m).tar.gz"
tar -C dist -czf "$ARCHIVE.tmp" pt2-viewer && mv "$ARCHIVE.tmp" "$ARCHIVE"
echo "build_bundle: $BUNDLE is $(du -sh "$BUNDLE" | cut -f1), $ARCHIVE is $(du -sh "$ARCHIVE" | cut -f1)"
