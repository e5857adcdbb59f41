#!/usr/bin/env bash
# Open files with the built bundle the way a user gets it: `check_bundle.sh BUNDLE PT2 PTE ONNX [PICTURES]`.
#
# Called by build_bundle.sh (`make package`). The bundle is copied to a temporary folder and run with nothing of the
# build machine in reach: a new HOME (so an empty cache), a clean environment (`env -i`: no PYTHONPATH, no .venv on
# PATH), and the checkout (with its .venv) hidden under an empty tmpfs in a private mount namespace (`unshare`), so a
# file the bundle lacks cannot be found in the sources it was built from. It then takes screenshots of
#   1. PT2, on a first open (read from its JSON, then stored in the parsed-program cache),
#   2. PT2 again, which must read the cache entry the first open wrote (the entry is reused, not written anew),
#   3. PTE, an ExecuTorch program,
#   4. ONNX, an `.onnx` model (read by the bundle's onnx, numpy and protobuf), grouped by its modules,
# each a graph with nodes, laid out by the bundle's own Graphviz child. The pictures are copied to PICTURES.
set -euo pipefail

[ $# -ge 4 ] || { echo "usage: check_bundle.sh BUNDLE PT2 PTE ONNX [PICTURES]" >&2; exit 2; }
BUNDLE=$(realpath "$1"); PT2=$(realpath "$2"); PTE=$(realpath "$3"); ONNX=$(realpath "$4"); PICTURES=${5:-}
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd -P)
VENV=$(realpath "$CHECKOUT/.venv" 2>/dev/null || true)

AWAY=$(mktemp -d /tmp/pt2-viewer-bundle-check.XXXXXX)
trap 'rm -rf "$AWAY"' EXIT
cp -a "$BUNDLE" "$AWAY/pt2-viewer"
mkdir "$AWAY/files" "$AWAY/home" "$AWAY/out"
mkdir -m 700 "$AWAY/runtime"
cp "$PT2" "$PTE" "$ONNX" "$AWAY/files/"

# What is hidden: the checkout, and .venv where it lives elsewhere (a link).
HIDDEN=("$CHECKOUT")
case "$VENV" in "$CHECKOUT"/*|"") ;; *) HIDDEN+=("$VENV") ;; esac

# Run as root: a mount namespace. Otherwise: a user namespace that maps us to root inside it, where Debian, Ubuntu
# and Fedora let a user mount a tmpfs.
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
  HIDE=(unshare --mount --propagation private)
elif unshare --user --map-root-user --mount true 2>/dev/null; then
  HIDE=(unshare --user --map-root-user --mount --propagation private)
else
  HIDE=()
  echo "check_bundle: unshare cannot make a mount namespace here, so the checkout stays in reach of the bundle" >&2
fi

cat > "$AWAY/check.sh" <<'INNER'
set -u
AWAY=$1; PT2=$AWAY/files/$2; PTE=$AWAY/files/$3; ONNX=$AWAY/files/$4; HIDING=$5; shift 5
fail() { echo "check_bundle: $*" >&2; exit 1; }
if [ "$HIDING" = 1 ]; then
  for folder in "$@"; do
    mount -t tmpfs -o size=1m pt2-viewer-hidden "$folder" || fail "could not hide $folder"
  done
  [ -z "$(ls -A "$1")" ] || fail "$1 is still in reach"
fi
cd "$AWAY/out"

# A user's session: a home, the system's PATH, a UTF-8 locale, a runtime folder; no display (--screenshot needs none).
open_in_bundle() {
  local file=$1 picture=$AWAY/out/$2
  env -i HOME="$AWAY/home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 XDG_RUNTIME_DIR="$AWAY/runtime" \
    "$AWAY/pt2-viewer/pt2-viewer" "$file" --screenshot "$picture" >/dev/null \
    || fail "the bundle could not open $(basename "$file") (its message is above)"
  [ -s "$picture" ] || fail "the bundle wrote no picture of $(basename "$file")"
  grep -q '"kind": "node"' "${picture%.png}.json" \
    || fail "the bundle's picture of $(basename "$file") shows no node (${picture%.png}.json)"
}
cache_entry() {  # the parsed-program cache's entries: inode and modification time of each
  find "$AWAY/home/.cache/pt2-viewer/programs" -name "*.msgpack" -printf "%i %T@\n" 2>/dev/null
}

open_in_bundle "$PT2" first-open.png
first=$(cache_entry)
[ -n "$first" ] || fail "the first open of $(basename "$PT2") stored nothing in the parsed-program cache" \
  "($AWAY/home/.cache/pt2-viewer/programs)"
open_in_bundle "$PT2" reopen.png
second=$(cache_entry)
# A hit reuses the entry and touches it (os.utime); a miss writes a new file in its place (another inode).
[ "$(cut -d' ' -f1 <<<"$first")" = "$(cut -d' ' -f1 <<<"$second")" ] && [ "$first" != "$second" ] \
  || fail "the second open of $(basename "$PT2") did not read the cache entry the first one wrote"
open_in_bundle "$PTE" pte.png
open_in_bundle "$ONNX" onnx.png
# grouped by the PyTorch modules the file names, not a flat list of ONNX ops: a module's frame, or a module of one op
# drawn as that op's box under the module's name and class (`bn1: BatchNorm2d`)
grep -Eq '"kind": "group"|"label": "[A-Za-z0-9_.]+: [A-Za-z]' "$AWAY/out/onnx.json" \
  || fail "the bundle's picture of $(basename "$ONNX") shows no module ($AWAY/out/onnx.json)"
INNER

hiding=1; [ ${#HIDE[@]} -gt 0 ] || hiding=0
status=0
"${HIDE[@]}" bash "$AWAY/check.sh" "$AWAY" "$(basename "$PT2")" "$(basename "$PTE")" "$(basename "$ONNX")" "$hiding" \
  "${HIDDEN[@]}" \
  || status=$?
if [ -n "$PICTURES" ]; then  # also those of a failed check, to look at
  rm -rf "$PICTURES" && mkdir -p "$PICTURES"
  cp "$AWAY"/out/*.png "$PICTURES/" 2>/dev/null || true
fi
[ $status -eq 0 ] || exit $status
echo "check_bundle: away from the checkout, the bundle opened $(basename "$PT2") twice (the second from the" \
  "parsed-program cache), $(basename "$PTE") and $(basename "$ONNX")${PICTURES:+; pictures in $PICTURES}"
