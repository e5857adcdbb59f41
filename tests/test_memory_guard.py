"""packaging/memory_guard.py, which runs PyInstaller in `make package`: a build that grows past its limit is stopped
with a message naming the limit (it once grew past 18 GB and took the machine down), and one within it keeps its
exit status and says its peak."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.programs import REPO_ROOT

GUARD = str(REPO_ROOT / "packaging" / "memory_guard.py")


def guarded(limit_mb: int, code: str) -> tuple[int, str]:
    """(exit status, the guard's last line). The command's stdin is a pipe held open until the guard has returned:
    a command that waits on it ends only when the guard stops it."""
    with subprocess.Popen([sys.executable, GUARD, str(limit_mb), sys.executable, "-c", code], stdin=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        status = proc.wait(timeout=120)
        assert proc.stderr is not None
        return status, proc.stderr.read().strip().splitlines()[-1]


def test_a_command_past_its_limit_is_stopped_with_the_limit_named() -> None:
    # the memory is held by a grandchild, as PyInstaller's isolated helpers hold it, and written so it is resident
    code = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import sys; data = b\"x\" * (300 * 2**20); sys.stdin.read()'])")
    status, message = guarded(150, code)
    assert status == 1, message
    assert re.fullmatch(r"memory_guard: stopped 'python -c .*' at \d+ MB, past its limit of 150 MB; "
                        r"see packaging/README.md \(Memory\)", message), message


def test_a_command_within_its_limit_keeps_its_exit_status_and_says_its_peak() -> None:
    status, message = guarded(4096, "import sys; sys.exit(3)")
    assert status == 3, message
    assert re.fullmatch(r"memory_guard: 'python -c .*' peaked at \d+ MB \(limit 4096 MB\)", message), message
