#!/usr/bin/env bash
# Build the one-folder bundle dist/pt2-viewer/ (GUI without torch) and dist/pt2-viewer-VERSION-linux-ARCH.tar.gz.
# Called by `make package`. Installs PyInstaller into .venv on first use, builds within MEMORY_LIMIT_MB, then checks
# the result: the bundle starts, holds no torch, carries the worker sources and the desktop files, and opens a .pt2
# twice, a .pte and a .onnx away from the checkout (packaging/check_bundle.sh). See packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
PYINSTALLER_SPEC="pyinstaller>=6.6,<7"
if ! "$PY" -m PyInstaller --version >/dev/null 2>&1; then
  echo "build_bundle: installing PyInstaller into .venv"
  "$PY" -m pip install -q "$PYINSTALLER_SPEC"
fi

# The build peaks near 255 MB (packaging/README.md, Memory); far past that, something walks what it should not.
MEMORY_LIMIT_MB=4096
"$PY" packaging/memory_guard.py "$MEMORY_LIMIT_MB" "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
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
# The worker's Python (here .venv's, which has torch) must import core from the bundle's sources alone.
ROOT=$PWD
(cd / && PYTHONPATH="$ROOT/$BUNDLE/_internal/pysrc" "$ROOT/$PY" -c \
  "import pt2_viewer.core.worker.__main__ as w; assert '/pysrc/' in w.__file__, w.__file__") \
  || fail "pt2_viewer.core.worker does not import from $BUNDLE/_internal/pysrc"
# The Graphviz layout child runs as `pt2-viewer -m pt2_viewer.core.layout`: lay out a 3-node chain through it.
"$PY" - "$BUNDLE/pt2-viewer" <<'PYCHECK' || fail "the bundle cannot lay out a graph (pt2-viewer -m pt2_viewer.core.layout)"
import sys
from pt2_viewer.core.layout.records import LayoutEdge, LayoutNode, LayoutRequest
from pt2_viewer.core.layout.service import LayoutService
request = LayoutRequest([LayoutNode(n, 80, 30) for n in "abc"], [LayoutEdge("a", "b"), LayoutEdge("b", "c")])
with LayoutService(use_cache=False, python=sys.argv[1]) as service:
    (result,) = service.wait(service.submit([request]), timeout=120)
assert set(result.positions) == {"a", "b", "c"}, result.positions
PYCHECK
# A user's first files, opened by the bundle alone: the example twice (the reopen reads the parsed-program cache),
# a small ExecuTorch program, made (and cached) by the tests' own pipeline code with .venv's torch and ExecuTorch,
# and the tests' BatchNorm CNN exported to ONNX (tests/onnx_programs.py, cached with the tests' fixtures).
PTE_LOG=build/pyinstaller/small_pte.log  # torch's and torchao's warnings on import, kept out of the way
PTE=$("$PY" -c "from tests.zoo.pipeline import small_pte; print(small_pte())" 2>"$PTE_LOG" | tail -n 1) \
  && [ -f "$PTE" ] || fail "could not make the small .pte the bundle is checked with (tests/zoo/pipeline.py" \
  "small_pte); its output is in $PTE_LOG"
ONNX_LOG=build/pyinstaller/small_onnx.log
ONNX=$("$PY" -c "from tests.onnx_programs import CNN, onnx_path; print(onnx_path(CNN))" 2>"$ONNX_LOG" | tail -n 1) \
  && [ -f "$ONNX" ] || fail "could not make the .onnx the bundle is checked with (tests/onnx_programs.py onnx_path);" \
  "its output is in $ONNX_LOG"
bash packaging/check_bundle.sh "$BUNDLE" resources/examples/example.pt2 "$PTE" "$ONNX" dist/bundle-check \
  || fail "the bundle cannot open files away from the checkout (the pictures it took are in dist/bundle-check/)"

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
ARCHIVE="dist/pt2-viewer-$VERSION-linux-$(uname -m).tar.gz"
tar -C dist -czf "$ARCHIVE.tmp" pt2-viewer && mv "$ARCHIVE.tmp" "$ARCHIVE"
echo "build_bundle: $BUNDLE is $(du -sh "$BUNDLE" | cut -f1), $ARCHIVE is $(du -sh "$ARCHIVE" | cut -f1)"
