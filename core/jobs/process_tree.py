"""Find every process a worker job started, even one that left the job's process group, to end it or weigh it.

Killing the worker's process group ends the worker and the children that stayed in it, but a script can `setsid()`
and double-fork into a daemon that outlives the job. Every worker is started with a marker in its environment
(`PT2V_JOB_MARKER=<random>`), which its children inherit; walking /proc for processes whose environment holds the
marker finds them all, whatever group or session they moved to. The same walk sums their resident memory, so the
client can stop a job that grows past its memory limit (a limit the kernel cannot apply to a whole tree). Linux only:
where /proc is missing, nothing is found and the process group kill still applies.
"""
from __future__ import annotations

import os
import signal
from dataclasses import dataclass

MARKER_ENV = "PT2V_JOB_MARKER"
PROC = "/proc"
KILL_ROUNDS = 5  # a process forking while we kill: scan again until nothing carries the marker


@dataclass
class TreeUsage:
    pids: list[int]
    rss_bytes: int


def marked_pids(marker: str) -> list[int]:
    """The processes (of this user: others' environments cannot be read) whose environment carries `marker`."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    try:
        entries = os.listdir(PROC)
    except OSError:
        return []
    me = os.getpid()
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"{PROC}/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:  # gone, or not ours
            continue
        if needle in env.split(b"\0"):
            found.append(int(name))
    return found


def usage(marker: str) -> TreeUsage:
    """The marked processes and their resident memory in total."""
    page = os.sysconf("SC_PAGE_SIZE")
    pids = marked_pids(marker)
    total = 0
    for pid in pids:
        try:
            with open(f"{PROC}/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return TreeUsage(pids, total)


def kill_marked(marker: str) -> int:
    """SIGKILL every process carrying `marker`; returns how many were signalled."""
    killed = 0
    for _ in range(KILL_ROUNDS):
        pids = marked_pids(marker)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed
