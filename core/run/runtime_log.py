"""What ExecuTorch's C++ runtime says while it loads a method: its own reason for a failure, its noise kept out.

The runtime logs to the process's stderr (file descriptor 2) from C++, past Python's `sys.stderr`: a method that
cannot load raises only "Failed to load method forward, error: 0x:14", while the reason ("Missing operator: [0]
aten::sort.values") is a log line, lost among torchao's and pytree's warnings in the worker's output. XNNPACK's
start-up writes `[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version` and the like, which say nothing
to the user. `runtime_log()` sends descriptor 2 to a temporary file for the length of a load, then passes on what
the runtime wrote except those lines, and keeps the lines for the failure's message (`missing_operators`).
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pt2_viewer.core.util.stderr_capture import captured_stderr

NOISE = re.compile(r"^\[cpuinfo_utils\.cpp:\d+\]")  # XNNPACK's CPU probing, every time a delegate loads
_MISSING = re.compile(r"Missing operator: \[\d+\] (\S+)")


@dataclass
class RuntimeLog:
    """The lines the runtime wrote to stderr during the block, noise included (for a failure's detail)."""

    lines: list[str] = field(default_factory=list)

    def missing_operators(self) -> list[str]:
        """The operators the runtime found no kernel for (`aten::sort.values`), once each, in the log's order."""
        return list(dict.fromkeys(m.group(1) for line in self.lines for m in [_MISSING.search(line)] if m))


@contextmanager
def runtime_log() -> Iterator[RuntimeLog]:
    """Capture file descriptor 2 for the block (ExecuTorch's C++ log); afterwards write back to stderr what it said,
    less the CPU-probing noise."""
    log = RuntimeLog()
    try:
        with captured_stderr(log.lines):
            yield log
    finally:
        kept = [line for line in log.lines if not NOISE.match(line)]
        if kept:
            print("\n".join(kept), file=sys.stderr, flush=True)
