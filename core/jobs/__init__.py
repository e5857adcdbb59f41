"""How a worker job runs and loads programs: starting and following a job process (`client`), the events it sends
(`protocol`), its process tree, which Python runs it (`python_env`), and loading a `.pt2` with torch safely
(`archive_check`, `expr_grammar`, `loading`, `errors`). Domain packages (export, decompose, run) build their jobs on
this; `pt2_viewer.core.worker` is the child process that runs them. See docs/worker.md.
"""
