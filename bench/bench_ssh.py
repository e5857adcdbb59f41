"""A worker over SSH against a local one: the first job's overhead (connect, copy the worker code and the program) and
a warm job's (the connection shared, everything cached), as ratios to the same job on a local worker. Prints figures;
asserts nothing.

The server is a real sshd on 127.0.0.1 with throwaway keys and a venv of this Python (the tests' fixture,
tests/core/jobs/ssh_server.py), so the figures are the protocol's cost, not a network's: on a real link add the round
trips (about 5 per job: have, run, pull, gc, plus one per file copied) and the copy at the link's rate.

- local: `WorkerJob` (a fresh worker process: Python, torch, the job), the median of `--repeat` runs;
- first: a fresh scratch folder and no shared connection: ssh connects (ControlMaster), copies the worker code and the
  program, then runs the job; "to start" is the time to the supervisor's hello (everything before the worker starts);
- warm: the same job again: the connection is shared and nothing is copied (median of `--repeat`).

Targets (issue 25): a warm job within 1.3x of local; the first within 2x (on 127.0.0.1).

Usage: `.venv/bin/python bench/bench_ssh.py [--program PATH.pt2] [--repeat N]` (default: the tests' batchnorm_train).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def timed(make, out: Path) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    """(start to finish, the remote protocol's own time, the job). The protocol's time is start to the supervisor's
    hello (connect, copy, start) plus the worker's exit to the end (copy the results back, trim the cache); the
    worker's own time, its exit included, is the local job's."""
    marks: dict[str, float] = {}
    t = time.perf_counter()

    def mark(event: dict) -> None:  # type: ignore[type-arg]
        if event["type"] == "remote_started" or event.get("stage") == "fetch":  # fetch: the worker has exited
            marks[event.get("stage") or event["type"]] = time.perf_counter() - t

    job = make(out, mark)
    outcome = job.wait()
    wall = time.perf_counter() - t
    if not outcome.ok or not (outcome.result or {}).get("ok"):
        raise SystemExit(f"the job failed: {outcome.message} {(outcome.result or {}).get('error')}")
    protocol = marks["remote_started"] + (wall - marks["fetch"]) if "remote_started" in marks else 0.0
    return wall, protocol, job


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--program", type=Path, help="the .pt2 to decompose (default: the tests' batchnorm_train)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    from pt2_viewer.core.jobs.client import WorkerJob
    from pt2_viewer.core.jobs.remote.job import RemoteJob
    from pt2_viewer.core.jobs.remote.target import parse_worker_url
    from pt2_viewer.core.jobs.spec import JobSpec
    from tests.core.jobs.ssh_server import start_sshd, stop_sshd

    if args.program is None:
        from tests.programs import program_path

        args.program = program_path("batchnorm_train")
    src = args.program.resolve()
    root = Path(tempfile.mkdtemp(prefix="pt2v-bench-ssh-"))
    server = start_sshd(root / "sshd")
    os.environ.update(server.environ())
    target = parse_worker_url(server.url)
    request = {"program": str(src), "to": "core"}

    def local(out: Path, on_event):  # type: ignore[no-untyped-def]
        return WorkerJob(JobSpec("decompose", dict(request, output=str(out / "d.pt2")), out, on_event=on_event))

    def remote(out: Path, on_event):  # type: ignore[no-untyped-def]
        return RemoteJob(JobSpec("decompose", dict(request, output=str(out / "d.pt2")), out, on_event=on_event), target)

    try:
        first_s, first_protocol, first_job = timed(remote, root / "first")
        locals_, warm = [], []
        for i in range(args.repeat):  # interleaved: the machine's load drifts alike for both
            locals_.append(timed(local, root / f"local{i}")[0])
            warm.append(timed(remote, root / f"warm{i}"))
        local_s = statistics.median(locals_)
        warm_s = statistics.median(w[0] for w in warm)
        warm_protocol = statistics.median(w[1] for w in warm)
    finally:
        stop_sshd(server)
    figures = {
        "program": str(src), "program_bytes": src.stat().st_size,
        "local_s": round(local_s, 3),
        "first_s": round(first_s, 3), "first_protocol_s": round(first_protocol, 3),
        "first_copied": first_job.uploaded,  # type: ignore[attr-defined]
        "warm_s": round(warm_s, 3), "warm_protocol_s": round(warm_protocol, 3),
        "warm_copied": warm[-1][2].uploaded,  # type: ignore[attr-defined]
        # the protocol's own time over the local job (the worker's time is the same job's on either side)
        "first_over_local": round((local_s + first_protocol) / local_s, 2),
        "warm_over_local": round((local_s + warm_protocol) / local_s, 2),
        "wall_first_over_local": round(first_s / local_s, 2), "wall_warm_over_local": round(warm_s / local_s, 2),
    }
    print(json.dumps(figures, indent=1))
    print(f"first job {figures['first_over_local']}x local (+{figures['first_protocol_s']} s: connect, copy "
          f"{', '.join(figures['first_copied'])}, fetch the results), warm job {figures['warm_over_local']}x local "
          f"(+{figures['warm_protocol_s']} s); targets 2x and 1.3x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
