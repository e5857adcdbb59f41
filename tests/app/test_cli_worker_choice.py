"""Which subcommands take the worker chosen in Preferences (app/cli.py `uses_worker`): every one that runs a worker
job, `trace` only when it runs a script; reading a trace or an archive loads no Qt settings."""
from __future__ import annotations

from pt2_viewer.app.cli import uses_worker


def test_trace_of_a_script_takes_the_chosen_worker_and_reading_a_trace_does_not() -> None:
    assert uses_worker("trace", ["model.py", "-o", "out"])
    assert not uses_worker("trace", ["TORCH_TRACE_DIR", "--json"])
    assert uses_worker("numerics", ["model.pt2", "--candidate", "core"])
    assert not uses_worker("info", ["model.pt2"])
