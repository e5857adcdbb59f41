"""Worker jobs on another machine over the system's ssh: `worker_job` starts a job on whichever worker is chosen
(core/jobs/python_env.choose_worker), local or `ssh://`. See docs/worker.md ("An SSH worker")."""
