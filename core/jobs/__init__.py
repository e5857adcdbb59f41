"""Worker jobs: each module `core.jobs.NAME` has `run_job(request: dict, out: Path, emit) -> dict` and runs inside a
worker process (`python -m core.worker NAME ...`), where importing torch is allowed. See docs/worker.md.
"""
