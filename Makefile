# `make run` and `make test` do all set-up on a fresh machine; `make setup` only installs.
PY := .venv/bin/python

.PHONY: setup run check test test-fast bench screenshot package clean zoo

setup:
	@bash scripts/setup.sh

run: setup
	$(PY) -m pt2_viewer

# Lint, import layers and types (scripts/check.sh); `make test` runs them before the tests.
check: setup
	bash scripts/check.sh

test: check
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

test-fast: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow"

bench: setup
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

# The model zoo (tests/zoo/) through every command, checked against torch; K=PATTERN for some programs only.
zoo: setup
	QT_QPA_PLATFORM=offscreen $(PY) scripts/zoo.py $(if $(K),-k '$(K)')

package: setup
	bash packaging/build_bundle.sh

clean:
	rm -rf .cache build dist *.egg-info
