#!/usr/bin/env bash
# The checks that keep the house standing (run by `make test` and `make check`, and so by CI): ruff (lint, configured
# in pyproject.toml), import-linter (the layers of docs/ARCHITECTURE.md), no import cycle and no module over 550
# lines (scripts/check_structure.py), and mypy (types, on pt2_viewer.core and
# pt2_viewer.app). Each
# check runs even when an earlier one fails, so one run shows every finding; the script fails if any check failed.
#
# Both import-linter and mypy read the installed package's layout, pt2_viewer/{core,app}; a checkout has core/ and
# app/ beside pt2_viewer/ instead, so they run on a small tree of links that lays the checkout out as a wheel does
# (.cache/check/pt2_viewer).
#
# mypy covers core/ and app/. Where PySide6's stubs say less than Qt does, app/qt.py has typed wrappers (the
# QApplication, keyword properties, tree items, table cells); the few `type: ignore`s left are narrow and say why
# (an attribute named as a Qt method it shadows, a stub that types an argument wrongly).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
ROOT=$PWD

tree=.cache/check
rm -rf "$tree" && mkdir -p "$tree/pt2_viewer"
cp pt2_viewer/*.py "$tree/pt2_viewer/"
ln -s "$ROOT/core" "$tree/pt2_viewer/core"
ln -s "$ROOT/app" "$tree/pt2_viewer/app"

failed=()

echo "check: ruff"
"$BIN/ruff" check --quiet . || failed+=(ruff)

echo "check: import-linter"
lint=$(cd "$tree" && PYTHONPATH="$ROOT/$tree" "$ROOT/$BIN/lint-imports" --no-cache "$ROOT/pyproject.toml" 2>&1)
status=$?
grep -E "KEPT|BROKEN|Contracts:|->|is not allowed|Error|error" <<<"$lint"
[ $status -eq 0 ] || failed+=(import-linter)

echo "check: import cycles and module size"
# scripts/check_structure.py: every import cycle among pt2_viewer's modules, inside packages too (grimp; imports under
# TYPE_CHECKING and function-local imports count), and every module of core/ or app/ over 550 lines.
(cd "$tree" && PYTHONPATH="$ROOT/$tree" "$ROOT/$BIN/python" "$ROOT/scripts/check_structure.py") || failed+=(structure)

echo "check: mypy"
packages=(-p pt2_viewer.core -p pt2_viewer.app)
(cd "$tree" && MYPYPATH="$ROOT/$tree" "$ROOT/$BIN/mypy" --config-file "$ROOT/pyproject.toml" \
    --cache-dir "$ROOT/.cache/mypy" "${packages[@]}") || failed+=(mypy)

if [ ${#failed[@]} -gt 0 ]; then
    echo "check: FAILED: ${failed[*]}"
    exit 1
fi
echo "check: all passed"
