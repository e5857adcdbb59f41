# `make run` and `make test` do all set-up on a fresh machine; `make setup` only installs.
PY := .venv/bin/python
# Bytecode is kept (__pycache__/, ignored by git) even where the environment says not to (PYTHONDONTWRITEBYTECODE, set
# on this project's machines): the tests start hundreds of Pythons (workers, layout children), each of which would
# compile the project's modules again, and pytest would rewrite every test module's asserts on every run.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: setup run check fixtures test test-fast bench screenshot package clean zoo

setup:
	@bash scripts/setup.sh

run: setup
	$(PY) -m pt2_viewer

# Lint, import layers and types (scripts/check.sh); `make test` runs them before the tests.
check: setup
	bash scripts/check.sh

# Every test fixture (programs, zoo, .pte/AOTInductor files, the doctor's runs) and torch's answers, built before the
# tests in a small process pool and cached per builder under .cache/ (scripts/build_fixtures.py; tests/README.md).
fixtures: setup
	$(PY) scripts/build_fixtures.py

# pytest runs on every core (pytest-xdist): a test file stays on one process (--dist loadfile), so a module's fixtures
# are built once; the longest files go first (tests/file_order.py), so no process ends the run alone.
# TEST_PROCESSES=0 runs in this process alone (a debugger, -x, --pdb).
TEST_PROCESSES ?= auto
PYTEST := QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(if $(filter 0,$(TEST_PROCESSES)),,-n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder)

# Everything, as CI runs it (.ci/run). pytest prints the 25 slowest tests and fails a test past its timeout
# (pyproject.toml); its exit status is kept in .cache/pytest-exit-status for .ci/run to explain.
test: check fixtures
	@rm -f .cache/pytest-exit-status; $(PYTEST); status=$$?; \
	echo $$status > .cache/pytest-exit-status; exit $$status

# The five-minute loop: leaves out what starts workers, the zoo, the sshd and the slow tests (tiers marked by
# tests/conftest.py from what each test uses); needs only the test programs' fixtures.
test-fast: setup
	$(PY) scripts/build_fixtures.py --only programs
	$(PYTEST) -m "not slow and not zoo and not ssh and not worker"

bench: setup
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

# The model zoo (tests/zoo/) through every command, checked against torch; K=PATTERN for some programs only.
zoo: setup
	QT_QPA_PLATFORM=offscreen $(PY) scripts/zoo.py $(if $(K),-k '$(K)')

# The one-folder app without torch in dist/ (packaging/README.md): PyInstaller within 4 GB of memory, then the
# bundle must open a .pt2 twice and a .pte away from the checkout.
package: setup
	bash packaging/build_bundle.sh

clean:
	rm -rf .cache build dist *.egg-info
