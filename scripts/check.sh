#!/usr/bin/env bash
# The checks that keep the house standing (run by `make test`, and so by CI): ruff (lint), import-linter (the layers
# of docs/ARCHITECTURE.md) and mypy (types, on core/). Both import-linter and mypy read the installed package's
# layout, pt2_viewer/{core,app}; a checkout has core/ and app/ beside pt2_viewer/ instead, so they run on a small tree
# of links that lays the checkout out as a wheel does (.cache/check/pt2_viewer).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
ROOT=$PWD

tree=.cache/check
rm -rf "$tree" && mkdir -p "$tree/pt2_viewer"
cp pt2_viewer/*.py "$tree/pt2_viewer/"
ln -s "$ROOT/core" "$tree/pt2_viewer/core"
ln -s "$ROOT/app" "$tree/pt2_viewer/app"

echo "check: ruff"
"$BIN/ruff" check --quiet .
echo "check: import-linter"
(cd "$tree" && PYTHONPATH="$ROOT/$tree" "$ROOT/$BIN/lint-imports" --no-cache "$ROOT/pyproject.toml" | grep -E "KEPT|BROKEN|Contracts:|->|is not allowed" )
echo "check: mypy"
(cd "$tree" && MYPYPATH="$ROOT/$tree" "$ROOT/$BIN/mypy" --config-file "$ROOT/pyproject.toml" -p pt2_viewer.core)
