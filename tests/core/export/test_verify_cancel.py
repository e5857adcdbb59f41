"""Cancelling a Diagnose ends its verification re-export too: the worker proves its fixes by exporting a patched copy
in a fresh worker (core/export/fixes/verify.py), which stays in the job's process group and carries its marker, so
the job's cancel (core/jobs/client.py, as the window's Diagnose > Cancel calls it) ends it with the rest of the tree.

The script is the doctor's branch on `y.sum() > 0`: the original stops at its export, and only the patched copy (its
branch rewritten with torch.cond) gets past it, to write its pid and wait, as a slow verification would."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.jobs import process_tree, protocol
from pt2_viewer.core.jobs.client import WorkerJob
from pt2_viewer.core.jobs.spec import JobSpec
from tests.core.jobs.test_worker import ENV, dead_within, pump_until

DOCTOR = Path(__file__).resolve().parents[2] / "scripts" / "doctor"
PID_ENV = "PT2V_TEST_VERIFY_PID_FILE"
AFTER = f'''
# reached only by the copy Diagnose verifies (the original stops at the export above)
import os
import time

with open(os.environ["{PID_ENV}"], "w") as f:
    f.write(str(os.getpid()))
while True:
    time.sleep(1)
'''


def test_cancelling_diagnose_ends_the_verification_worker(tmp_path):
    script = tmp_path / "gate.py"
    script.write_text((DOCTOR / "branch_on_sum.py").read_text(encoding="utf-8").replace("print(ep)\n", AFTER),
                      encoding="utf-8")
    pid_file = tmp_path / "verifying.pid"
    job = WorkerJob(JobSpec("export_script", {"script": str(script), "diagnose": True}, tmp_path / "out",
                            env={**ENV, PID_ENV: str(pid_file)}, timeout_s=600))
    job.start()
    try:
        pump_until(job, lambda: pid_file.is_file() and pid_file.read_text().strip() != "", limit_s=540)
        assert job.running, f"the job ended before its verification ran: {job.outcome}"
        assert any(e.get("stage") == "verify" for e in job.events), "the worker said it is verifying"
        verifier = int(pid_file.read_text())
        assert verifier != job.pid and verifier in process_tree.marked_pids(job.marker)
        job.cancel()
        assert job.outcome is not None and job.outcome.status == protocol.CANCELLED
        assert dead_within(verifier, 2.0), "the verification worker outlived the cancelled Diagnose"
        assert process_tree.marked_pids(job.marker) == []
    finally:
        job.cancel()
        process_tree.kill_marked(job.marker)
