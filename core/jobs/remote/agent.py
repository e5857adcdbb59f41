"""The server side of an SSH worker: one small stdlib-only program, sent inline with every ssh command.

The client runs `PYTHON -c "<this file, compressed>" COMMAND SCRATCH ...` on the server (core/jobs/remote/ssh.py),
so nothing is installed there but torch. Its commands:

  probe SCRATCH                 one JSON line: Python, torch, CUDA devices with free memory, the machine's memory
  put SCRATCH KIND HASH SIZE    SIZE bytes on stdin into the cache (a file, checked against its hash; or the worker
                                code's zip, unpacked into SCRATCH/code/HASH)
  run SCRATCH SPEC              the supervisor: one job (below); first, if the cache lacks the worker code or a file
                                the job needs, it only says which (`{"c": "missing"}`) and the client copies them
  pull SCRATCH JOB CAP DIR...   a tar of the job's outputs on stdout; the job's folder is removed afterwards, and
                                the cache trimmed as gc does
  gc SCRATCH CAP_BYTES          oldest cached files and code first out until the cache fits the cap
  empty SCRATCH                 everything removed

The supervisor (`run`) materialises the job's input files from the cache (hard links with their original names, so a
script finds its neighbours), writes the request, starts `python -m pt2_viewer.core.worker` with the cached code on
PYTHONPATH in its own session, and multiplexes its three pipes (events, stdout, stderr) onto this process's stdout,
the one pipe ssh has: one JSON frame per line, `{"c": "e"|"o"|"r", "d": LINE}` and supervisor frames
`{"c": "hello"|"exit", ...}`. It enforces the time limit and the memory limit of the whole process tree (the tree is
found by a marker in its environment, core/jobs/process_tree.py), and kills the tree on `cancel` read from stdin, or
at end of file on stdin: the connection dropped or the client died, and no job outlives it on the server.
"""
from __future__ import annotations

import hashlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import uuid
import zipfile

CHUNK = 1 << 20
MEMORY_CHECK_S = 0.5
MAX_LINE = 1 << 20
JOBS_STALE_S = 86400.0  # a job folder left behind (its pull never came) is removed by the next gc after a day
JOB_TOKEN = "@PT2V_JOB@"  # as core/jobs/remote/paths.py: the job folder's place in a request


def _dirs(scratch):
    return {name: os.path.join(scratch, name) for name in ("code", "files", "jobs")}


def _say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _touch(path):
    try:
        os.utime(path)
    except OSError:
        pass


# --- probe ---------------------------------------------------------------------------------------------------------
def probe(scratch):
    import platform

    info: dict = {"python": sys.executable, "python_version": platform.python_version(), "host": platform.node()}
    info["memory"] = _meminfo()
    info["scratch"] = scratch
    info["scratch_bytes"] = _tree_size(scratch)
    try:
        import torch
    except BaseException as e:
        info["torch_error"] = f"{type(e).__name__}: {e}"
    else:
        info["torch_version"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        devices = []
        try:
            for i in range(torch.cuda.device_count()):
                free, total = torch.cuda.mem_get_info(i)
                devices.append({"name": torch.cuda.get_device_name(i), "free": free, "total": total})
        except BaseException as e:
            info["cuda_error"] = f"{type(e).__name__}: {e}"
        info["cuda_devices"] = devices
    _say(info)
    return 0


def _meminfo():
    values = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    values[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"total": values.get("MemTotal"), "available": values.get("MemAvailable")}


def _tree_size(root):
    total = 0
    for folder, _dirnames, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


# --- the cache -----------------------------------------------------------------------------------------------------
def put(scratch, kind, digest, size):
    d = _dirs(scratch)
    for folder in d.values():
        os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(d["files"], f".part-{digest}-{uuid.uuid4().hex}")
    sha = hashlib.sha256()
    left = size
    try:
        with open(tmp, "wb") as f:
            while left > 0:
                chunk = sys.stdin.buffer.read(min(CHUNK, left))
                if not chunk:
                    break
                sha.update(chunk)
                f.write(chunk)
                left -= len(chunk)
        if left:
            raise ValueError(f"the upload ended {left} bytes short")
        if sha.hexdigest()[: len(digest)] != digest:
            raise ValueError("the upload does not match its hash (damaged on the way)")
        if kind == "code":
            target = os.path.join(d["code"], digest)
            staging = target + f".part-{uuid.uuid4().hex}"
            with zipfile.ZipFile(tmp) as z:
                z.extractall(staging)
            open(os.path.join(staging, ".complete"), "w").close()
            try:
                os.rename(staging, target)
            except OSError:  # another job unpacked the same version meanwhile
                shutil.rmtree(staging, ignore_errors=True)
        else:
            os.replace(tmp, os.path.join(d["files"], digest))
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        _say({"ok": False, "error": str(e)})
        return 1
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _say({"ok": True})
    return 0


def gc(scratch, cap, quiet=False):
    """Oldest first out (by last use: `run` touches what it uses) until files and code fit in `cap`."""
    d = _dirs(scratch)
    now = time.time()
    entries = []
    for kind in ("files", "code"):
        try:
            names = os.listdir(d[kind])
        except OSError:
            continue
        for name in names:
            path = os.path.join(d[kind], name)
            size = _tree_size(path) if os.path.isdir(path) else os.path.getsize(path)
            entries.append((os.path.getmtime(path), size, path))
    try:
        for name in os.listdir(d["jobs"]):
            path = os.path.join(d["jobs"], name)
            if now - os.path.getmtime(path) > JOBS_STALE_S:
                shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass
    total = sum(e[1] for e in entries)
    removed = 0
    for _mtime, size, path in sorted(entries):
        if total <= cap:
            break
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
        total -= size
        removed += 1
    if not quiet:
        _say({"bytes": total, "removed": removed})
    return 0


def empty(scratch):
    for folder in _dirs(scratch).values():
        shutil.rmtree(folder, ignore_errors=True)
    _say({"bytes": 0})
    return 0


# --- the supervisor ------------------------------------------------------------------------------------------------
class Supervisor:
    """One job: start the worker, relay its pipes as frames, enforce the limits, end its whole tree."""

    def __init__(self, scratch, spec):
        self.d = _dirs(scratch)
        self.spec = spec
        self.job_dir = os.path.join(self.d["jobs"], spec["id"])
        self.code_dir = os.path.join(self.d["code"], spec["code"])
        self.tree = None  # core/jobs/process_tree.py from the cached worker code, once it is known to be there
        self.marker = uuid.uuid4().hex
        self.proc = None
        self.reason = None
        self.tree_mb = None
        self.buffers = {}

    def prepare(self):
        os.makedirs(self.job_dir, exist_ok=True)
        _touch(self.code_dir)
        for link in self.spec.get("links", []):
            src = os.path.join(self.d["files"], link["hash"])
            dst = os.path.join(self.job_dir, link["path"])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            _touch(src)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copyfile(src, dst)
        for folder in self.spec.get("dirs", []):
            os.makedirs(os.path.join(self.job_dir, folder), exist_ok=True)
        out = os.path.join(self.job_dir, self.spec["out"])
        os.makedirs(out, exist_ok=True)
        request = os.path.join(out, "request.json")
        with open(request, "w", encoding="utf-8") as f:
            json.dump(_placed(self.spec["request"], self.job_dir), f)
        return out, request

    def start(self):
        sys.path.insert(0, self.code_dir)
        from pt2_viewer.core.jobs import process_tree  # after sys.path has the code

        self.tree = process_tree
        out, request = self.prepare()
        events_r, events_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (self.code_dir, env.get("PYTHONPATH", "")) if p)
        env["PT2V_EVENTS_FD"] = str(events_w)
        env[self.tree.MARKER_ENV] = self.marker
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONSAFEPATH"] = "1"  # as a local worker: the working directory is not on the import path
        tmp = os.path.join(self.job_dir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        env["TMPDIR"] = tmp
        env.update(self.spec.get("env") or {})
        cmd = [sys.executable, "-m", "pt2_viewer.core.worker", self.spec["job"], "--request", request, "--out", out]
        if self.spec.get("memory_limit_mb"):
            cmd += ["--max-memory-mb", str(int(self.spec["memory_limit_mb"]))]
        cwd = os.path.join(self.job_dir, self.spec["cwd"]) if self.spec.get("cwd") else None
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=(events_w,), env=env, cwd=cwd, start_new_session=True)
        self.proc = proc
        os.close(events_w)
        # the pt2_viewer package the code was found in (the cache's, by sys.path above): process_tree is its
        # core/jobs/process_tree.py
        code = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(process_tree.__file__))))
        _say({"c": "hello", "pid": os.getpid(), "worker_pid": proc.pid, "marker": self.marker,
              "python": sys.executable, "code": code, "job_dir": self.job_dir})
        assert proc.stdout is not None and proc.stderr is not None
        return {events_r: "e", proc.stdout.fileno(): "o", proc.stderr.fileno(): "r"}

    def kill(self, reason):
        if self.reason is None:
            self.reason = reason
        if self.tree is None:
            return
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.tree.kill_marked(self.marker)

    def relay(self, fd, channel):
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        buf = self.buffers.setdefault(fd, bytearray())
        if chunk:
            buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                if buf and (not chunk or len(buf) >= MAX_LINE):
                    _say({"c": channel, "d": buf.decode("utf-8", "replace")})
                    buf.clear()
                break
            _say({"c": channel, "d": buf[:nl].decode("utf-8", "replace")})
            del buf[: nl + 1]
        return bool(chunk)

    def missing(self):
        """What the job needs that the cache lacks (the client copies it and asks again), or None."""
        code = os.path.exists(os.path.join(self.code_dir, ".complete"))
        files = sorted({link["hash"] for link in self.spec.get("links", [])
                        if not os.path.isfile(os.path.join(self.d["files"], link["hash"]))})
        return None if code and not files else {"c": "missing", "code": code, "missing": files}

    def run(self):
        lacking = self.missing()
        if lacking is not None:  # nothing started: the client copies these and runs the job again
            _say(lacking)
            return 0
        pipes = self.start()
        proc, tree = self.proc, self.tree
        assert proc is not None and tree is not None
        sel = selectors.DefaultSelector()
        for fd in pipes:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, pipes[fd])
        stdin = sys.stdin.fileno()
        sel.register(stdin, selectors.EVENT_READ, "control")
        timeout = self.spec.get("timeout_s")
        deadline = time.monotonic() + timeout if timeout else None
        tree_mb = self.spec.get("tree_memory_mb")
        if tree_mb is None:  # as a local job's default: three quarters of this machine's memory (0: no limit)
            total = _meminfo().get("total")
            tree_mb = max(2048, total * 3 // 4 // 2**20) if total else None
        self.tree_mb = tree_mb
        next_check = 0.0
        open_pipes = set(pipes)
        exited_at = None
        while True:
            for key, _ in sel.select(timeout=0.1):
                if key.data == "control":
                    line = os.read(stdin, 4096)
                    if not line:  # the connection dropped or the client died: nothing may outlive it
                        self.kill("disconnected")
                        shutil.rmtree(self.job_dir, ignore_errors=True)
                        return 0
                    if b"cancel" in line:
                        self.kill("cancelled")
                elif not self.relay(key.fd, key.data):
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    open_pipes.discard(key.fd)
            now = time.monotonic()
            if deadline is not None and now > deadline and self.reason is None:
                self.kill("timed_out")
            if tree_mb and now >= next_check and self.reason is None:
                next_check = now + MEMORY_CHECK_S
                if tree.usage(self.marker).rss_bytes > tree_mb * 1024 * 1024:
                    self.kill("out_of_memory")
            if proc.poll() is not None:
                exited_at = exited_at or now
                # a grandchild may hold a pipe open: what it wrote within a second is relayed, then it is killed
                if not open_pipes or self.reason is not None or now - exited_at > 1.0:
                    break
        reason = self.reason
        self.kill(reason)  # children the job left behind must not outlive it
        for fd in list(open_pipes):
            while self.relay(fd, pipes[fd]):
                pass
        if reason:  # stopped: no results come back for it, so its folder goes now (a finished one's after `pull`)
            shutil.rmtree(self.job_dir, ignore_errors=True)
        _say({"c": "exit", "rc": proc.returncode, "reason": reason, "tree_memory_mb": self.tree_mb})
        return 0


def _placed(value, job_dir):
    """The request's paths, written by the client as JOB_TOKEN/..., in this job's folder."""
    if isinstance(value, str) and value.startswith(JOB_TOKEN):
        return job_dir + value[len(JOB_TOKEN):]
    if isinstance(value, list):
        return [_placed(v, job_dir) for v in value]
    if isinstance(value, dict):
        return {k: _placed(v, job_dir) for k, v in value.items()}
    return value


def _hang_up(signum, _frame):
    raise SystemExit(128 + signum)


def run(scratch, spec_json):
    supervisor = Supervisor(scratch, json.loads(spec_json))
    for sig in (signal.SIGHUP, signal.SIGTERM):  # sshd ending the session: end the job first
        signal.signal(sig, _hang_up)
    try:
        return supervisor.run()
    except BaseException:
        supervisor.kill("disconnected")
        raise


def pull(scratch, job_id, cap, folders):
    """The job's output folders as one tar stream on stdout, then its folder is removed and the cache trimmed to
    `cap` bytes (one round trip fewer per job than a separate gc)."""
    job_dir = os.path.join(_dirs(scratch)["jobs"], job_id)
    with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as tar:
        for folder in folders:
            path = os.path.join(job_dir, folder)
            if os.path.isdir(path):
                tar.add(path, arcname=folder)
    sys.stdout.buffer.flush()
    shutil.rmtree(job_dir, ignore_errors=True)
    return gc(scratch, cap, quiet=True)


def main(argv):
    command, scratch, args = argv[0], os.path.expanduser(argv[1]), argv[2:]
    if command == "probe":
        return probe(scratch)
    if command == "put":
        return put(scratch, args[0], args[1], int(args[2]))
    if command == "run":
        return run(scratch, args[0])
    if command == "pull":
        return pull(scratch, args[0], int(args[1]), args[2:])
    if command == "gc":
        return gc(scratch, int(args[0]))
    if command == "empty":
        return empty(scratch)
    _say({"error": f"unknown command {command}"})
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
