"""Run a command, say its peak memory, and stop it before it takes the machine's: `memory_guard.py LIMIT_MB CMD...`.

`make package` runs PyInstaller through this. Its analysis once grew past 18 GB and was killed by the kernel, taking
everything else running on the machine with it; a build that grows past its limit now fails with a message naming the
limit instead. PyInstaller imports packages and runs hooks in helper processes of its own, so the figure is the
largest sum of the memory of the command and all its descendants (proportional set sizes), sampled five times a
second (not `/usr/bin/time`'s maximum, which is that of the largest single process). Linux only (reads /proc).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SAMPLE_S = 0.2


def descendants(root: int) -> list[int]:
    """`root` and every process below it, from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        parent = int(stat[stat.rindex(")") + 2:].split()[1])  # the name in (...) may hold spaces
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def resident_bytes(pid: int) -> int:
    """The process's proportional set size: its resident memory with each page shared by N processes counted 1/N,
    so a sum over processes counts a page once (a forked helper's copy-on-write pages would count twice in RSS);
    its RSS where the kernel has no smaps_rollup (before Linux 4.14)."""
    for name, field in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            text = Path(f"/proc/{pid}/{name}").read_text()
        except FileNotFoundError:
            continue
        except OSError:  # ended, or not ours to read
            return 0
        for line in text.splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0  # ended, or a zombie


def run(limit_bytes: int, command: list[str]) -> tuple[int | None, int]:
    """(exit status, peak bytes); the status is None when the guard stopped the command."""
    proc = subprocess.Popen(command, start_new_session=True)
    peak = 0
    while proc.poll() is None:
        pids = descendants(proc.pid)
        total = sum(resident_bytes(pid) for pid in pids)
        peak = max(peak, total)
        if total > limit_bytes:
            os.killpg(proc.pid, signal.SIGKILL)
            for pid in pids:  # the whole tree, also a helper that left the process group
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            proc.wait()
            return None, peak
        time.sleep(SAMPLE_S)
    return proc.returncode, peak


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[1].isdigit():
        print("usage: memory_guard.py LIMIT_MB COMMAND [ARGS...]", file=sys.stderr)
        return 2
    limit_mb = int(argv[1])
    status, peak = run(limit_mb * 2**20, argv[2:])
    name = " ".join([Path(argv[2]).name, *argv[3:5]])[:60]  # python -m PyInstaller
    if status is None:
        print(f"memory_guard: stopped '{name}' at {peak / 2**20:.0f} MB, past its limit of {limit_mb} MB; "
              "see packaging/README.md (Memory)", file=sys.stderr)
        return 1
    print(f"memory_guard: '{name}' peaked at {peak / 2**20:.0f} MB (limit {limit_mb} MB)", file=sys.stderr)
    return status if status >= 0 else 128 - status  # killed by a signal: as a shell says it


if __name__ == "__main__":
    sys.exit(main(sys.argv))
