"""Open a report page in headless Chromium (Debian's `chromium`, installed by scripts/setup.sh) and read back what
its self-test mode (`#selftest=TERM`) wrote into the page, plus every console message the browser logged."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("headless Chromium is not installed (scripts/setup.sh installs Debian's 'chromium')")
    return exe


@dataclass
class PageRun:
    result: dict
    console: list[str]  # the page's console messages (errors and warnings included)


def run_selftest(page: Path, term: str, profile: Path, size: tuple[int, int] = (1400, 900)) -> PageRun:
    url = page.resolve().as_uri() + "#selftest=" + quote(term)
    proc = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=10000",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="selftest-result">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"the page wrote no self-test result; chromium said: {proc.stderr[-2000:]}"
    text = match.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return PageRun(json.loads(text), console)
