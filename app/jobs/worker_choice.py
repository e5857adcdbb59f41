"""The worker the user chose in File > Preferences (kept in QSettings), applied at start-up.

Kept apart from the dialog (app/jobs/preferences_dialog.py) so a window starting up reads the saved choice without
importing the dialog's widgets, probes and SSH sections: those load when File > Preferences… is first chosen. Where
nothing was ever chosen (most start-ups), neither the worker's Python choice nor the SSH target's parser is imported.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings

from pt2_viewer.app.settings import app_settings

if TYPE_CHECKING:
    from pt2_viewer.core.jobs.remote.target import RemoteWorker

PYTHON_KEY = "worker/python"
PROBES_KEY = "worker/probes"  # JSON: {python path: PythonProbe.to_json()}
KIND_KEY = "worker/kind"  # "local" (this machine's Python) or "ssh"
SSH_HOST_KEY = "worker/ssh_host"  # user@host[:port]
SSH_PYTHON_KEY = "worker/ssh_python"
SSH_SCRATCH_KEY = "worker/ssh_scratch"
CACHE_CAP_KEY = "worker/cache_cap_gb"
LOCAL, SSH = "local", "ssh"
REMOTE_JOB = "pt2_viewer.core.jobs.remote.job"  # the worker client and its schemas: imported when first needed
PYTHON_ENV = "pt2_viewer.core.jobs.python_env"  # where the choice is applied: imported once there is one


def default_cache_cap_gb() -> int:
    from pt2_viewer.core.jobs.remote import job as remote_job

    return remote_job.DEFAULT_CACHE_CAP_MB // 1024


def ssh_url(host: str, python: str) -> str:
    """The worker URL for `user@host[:port]` and the server's Python (WorkerUrlError when it is not one)."""
    from pt2_viewer.core.jobs.remote.target import WorkerUrlError, parse_worker_url

    host, python = host.strip(), python.strip()
    if not python.startswith("/") or not host or "/" in host:
        raise WorkerUrlError("a host (user@host[:port]) and the absolute path of the server's Python are needed")
    url = f"ssh://{host}{python}"
    parse_worker_url(url)
    return url


def saved_remote(store: QSettings | None = None) -> RemoteWorker | None:
    """The SSH worker chosen in Preferences, or None when the choice is this machine's Python."""
    store = store or app_settings()
    if str(store.value(KIND_KEY, LOCAL) or LOCAL) != SSH:
        return None
    from pt2_viewer.core.jobs.remote.target import DEFAULT_SCRATCH, WorkerUrlError, parse_worker_url

    try:
        return parse_worker_url(ssh_url(str(store.value(SSH_HOST_KEY, "") or ""),
                                        str(store.value(SSH_PYTHON_KEY, "") or "")),
                                str(store.value(SSH_SCRATCH_KEY, "") or "") or DEFAULT_SCRATCH)
    except WorkerUrlError:
        return None


def apply_saved_choice(store: QSettings | None = None) -> str | None:
    """Tell core which worker the user chose (at start-up and after OK); returns it (None: the default)."""
    store = store or app_settings()
    # A cap never saved is the remote job's own default: a window starting up need not import it to say so.
    if store.contains(CACHE_CAP_KEY) or REMOTE_JOB in sys.modules:
        from pt2_viewer.core.jobs.remote import job as remote_job

        default = default_cache_cap_gb()
        remote_job.set_cache_cap_mb(int_setting(store.value(CACHE_CAP_KEY, default), default) * 1024)
    remote = saved_remote(store)
    chosen = remote.url if remote is not None else str(store.value(PYTHON_KEY, "") or "") or None
    if chosen is None and PYTHON_ENV not in sys.modules:
        return None  # nothing chosen, and the module is not loaded yet: it starts with no choice
    from pt2_viewer.core.jobs import python_env

    python_env.set_preferred(chosen, remote.scratch if remote is not None else None)
    return chosen


def int_setting(value: object, fallback: int) -> int:
    try:
        return int(str(value))
    except ValueError:
        return fallback
