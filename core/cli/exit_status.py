"""The exit status of every `pt2-viewer` command, one rule for all (README.md, "Exit status"):

- 0 `OK`: the command did what was asked (a divergence Numerics finds, or an export call that failed in a script
  that ran to its end, is an answer, not a failure);
- 1 `FAILED`: the file, program or script given could not be used: missing, not a `.pt2`, damaged, holding no such
  program, refused (code without --trust), torch could not load, decompose or run it, or the script stopped with an
  error;
- 2 `USAGE_OR_WORKER`: the command itself could not do its work: a wrong command line (as argparse exits), a
  malformed request, or a worker that could not start, crashed, timed out, ran out of memory or raised unexpectedly;
- 130 `CANCELLED`: Ctrl+C, SIGTERM or SIGHUP stopped it, as a shell reports a command ended by Ctrl+C.

So the same bad file gives the same status in `info`, `render`, `report`, `export`, `decompose`, `run` and
`numerics` (tests/core/cli/test_exit_status.py).
"""
from __future__ import annotations

from pt2_viewer.core.jobs import protocol

OK = 0
FAILED = 1
USAGE_OR_WORKER = 2
CANCELLED = 130

# A failed job's `error.kind` (core/jobs/protocol.py) that is the command's failure, not the file's.
COMMAND_FAILURE_KINDS = frozenset({"request", "internal", protocol.START_FAILED, protocol.CRASHED, protocol.TIMED_OUT,
                                   protocol.OUT_OF_MEMORY})


def for_failure_kind(kind: str) -> int:
    """The exit status for a failed job of this kind."""
    if kind == protocol.CANCELLED:
        return CANCELLED
    return USAGE_OR_WORKER if kind in COMMAND_FAILURE_KINDS else FAILED
