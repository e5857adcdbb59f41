"""The worker process: `python -m pt2_viewer.core.worker JOB ...` runs one job (a kind of core/jobs/kinds.py:
export_script, decompose, run_program, numerics ...) away from the GUI process, where importing torch is allowed.
The machinery to start and follow it is in `pt2_viewer.core.jobs`. See docs/worker.md.
"""
