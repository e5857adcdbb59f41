"""What the Run tab says to do when the worker's Python cannot run torch jobs, for the Python that is in force.

A job's message ends with core's advice (core/jobs/python_env.py `HOW_TO_FIX`): "Choose a Python that has torch in
File > Preferences, or set PT2V_WORKER_PYTHON to one". Where PT2V_WORKER or PT2V_WORKER_PYTHON chose the Python,
a choice in Preferences would not take effect (the variable decides over it): the tab says to change or unset the
variable instead (issue 43 §5).
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from pt2_viewer.core.jobs.python_env import (
    FROM_ENV,
    HOW_TO_FIX,
    WORKER_ENV,
    WORKER_PYTHON_ENV,
    choose_worker,
)


def env_advice(environ: Mapping[str, str] | None = None) -> str | None:
    """What to do when a variable chose the worker (None when Preferences or the default did)."""
    env = os.environ if environ is None else environ
    choice = choose_worker(environ=dict(env))
    if choice.source != FROM_ENV:
        return None
    name = WORKER_ENV if env.get(WORKER_ENV, "").strip() else WORKER_PYTHON_ENV
    return (f"{name} is set to {choice.path}, and it decides over Preferences: set it to a Python that has torch "
            f"(e.g. a venv's bin/python after `pip install torch`), or unset it and start the viewer again to use "
            "the Python chosen in File > Preferences.")


def with_advice(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with core's advice replaced by the one that takes effect for the worker in force."""
    if HOW_TO_FIX not in text:
        return text
    advice = env_advice(environ)
    return text if advice is None else text.replace(HOW_TO_FIX, advice)


__all__ = ["env_advice", "with_advice"]
