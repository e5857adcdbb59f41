"""Run every zoo program through every command, as a user would, and check each answer against torch.

`make zoo` (or `.venv/bin/python scripts/zoo.py [-k PATTERN]`) exports the zoo (tests/zoo/, cached under
`.cache/zoo/`) and runs, for each program, training IR and decomposed, in a subprocess each:

  info        `python -m pt2_viewer info --json F`          equals what torch's own loader says the program holds
  screenshot  `python -m pt2_viewer F --screenshot x.png`   the window's first view shows graph nodes (pixels, not
                                                            its exit code)
  render      `python -m pt2_viewer render F -o x.svg`      an SVG that draws the program's nodes
  run         `python -m pt2_viewer run F --device cpu --json`  the same outputs as torch running the program on its
                                                               inputs
  decompose   `python -m pt2_viewer decompose F --to core -o OUT.pt2`  the ops torch's run_decompositions gives
  reopen      the window's second open (here, in this process): comes from the parsed-program cache and equals the
              program the reader builds from the JSON, node by node

No stderr may hold a Python traceback. Where torch itself cannot do what a command asks (run or decompose raise in
torch too), the command must say so in one clear line and fail: that counts as ok ("explained"). Each command has a
timeout; a hang is a FAIL. Prints the table (program x command, ok/FAIL and seconds) and the failures, and exits 1 if
any FAIL. tests/test_zoo.py imports the checks below, so `make test` runs a representative part of this table.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
COMMANDS = ("info", "screenshot", "render", "run", "decompose", "reopen")
TIMEOUT_S = {"info": 120, "screenshot": 300, "render": 300, "run": 300, "decompose": 300, "reopen": 300}
INFO_FIELDS = ("name", "dialect", "node_count", "nodes", "subgraphs", "inputs", "outputs", "range_constraints")


@dataclass
class Outcome:
    """One cell of the table."""

    command: str
    ok: bool
    seconds: float
    message: str = ""  # why it failed, or how a refusal was explained

    def cell(self) -> str:
        return f"{'ok' if self.ok else 'FAIL'} {self.seconds:5.1f}"


@dataclass
class Invocation:
    returncode: int | None  # None: timed out
    stdout: str
    stderr: str
    seconds: float


def invoke(args: list[str], timeout: float) -> Invocation:
    """`python -m pt2_viewer ARGS` in a fresh process, offscreen, as a user runs it."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    try:
        proc = subprocess.run([PYTHON, "-m", "pt2_viewer", *args], capture_output=True, text=True, timeout=timeout,
                              cwd=REPO_ROOT, env=env)
    except subprocess.TimeoutExpired as e:
        return Invocation(None, _text(e.stdout), _text(e.stderr), time.perf_counter() - start)
    return Invocation(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)


PRELOAD = REPO_ROOT / "tests" / "zoo" / "preload.py"
# What a user adds when the command's message asks for it. Never --trust: the zoo's programs name only modules of the
# libraries the import policy allows (core/jobs/import_policy.py), so one refused without it is a FAIL, as it is
# for a user who is told to turn safety off.
ADVICE = (("--import", ["--import", str(PRELOAD)]),)


def invoke_as_user(args: list[str], command: str) -> tuple[Invocation, list[str]]:
    """`invoke`, then, while the command refuses and its message says what to do, what a user does: --import FILE
    for types no installed module registers by itself (here the zoo's preload file: on this CPU torch, model modules
    such as CLIP's import only after the torchvision shim). All runs count: their times add up and none may print a
    traceback. Returns the last run and the options added."""
    inv = invoke(args, TIMEOUT_S[command])
    added: list[str] = []
    for flag, extra in ADVICE:
        if inv.returncode in (0, None) or flag not in inv.stderr or flag in added:
            continue
        again = invoke([*args, *added, *extra], TIMEOUT_S[command])
        added += extra
        inv = Invocation(again.returncode, again.stdout, inv.stderr + again.stderr, inv.seconds + again.seconds)
    return inv, [a for a in added if a.startswith("--")]


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def _first_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error", "pt2-viewer:", "Traceback"))]
    return (errors or lines or ["(no message)"])[-1][:300]


def process_problem(inv: Invocation, command: str, expect_success: bool = True) -> str | None:
    """What is wrong with how the command ended, before looking at its answer: a hang, a traceback, an exit code."""
    if inv.returncode is None:
        return f"hung: no answer within {TIMEOUT_S[command]} s"
    if "Traceback" in inv.stderr:
        tail = [line for line in inv.stderr.splitlines() if line.strip()][-1:] or ["?"]
        return f"printed a Python traceback: {tail[0][:300]}"
    if expect_success and inv.returncode != 0:
        return f"exit {inv.returncode}: {_first_error_line(inv.stderr)}"
    return None


# --------------------------------------------------------------------------------------------------------------------
# The checks: each runs one command on one program and compares its answer with torch's.


def torch_programs(path: Path) -> dict[str, Any]:
    """The archive loaded by torch itself, after the imports its pytree types and custom ops need (torchvision,
    transformers, the module of an output type torch names: tests/torch_reference.py's `load_programs`)."""
    from tests.torch_reference import load_programs

    return load_programs(path)


def check_info(path: Path, work: Path) -> Outcome:
    from tests.torch_reference import expected_info  # torch's answer, stored with the fixture (make fixtures)

    inv = invoke(["info", "--json", str(path)], TIMEOUT_S["info"])
    problem = process_problem(inv, "info")
    if problem is None:
        got = json.loads(inv.stdout)
        expected = expected_info(path)
        problem = _info_mismatch(expected, got)
    return Outcome("info", problem is None, inv.seconds, problem or "")


def _info_mismatch(expected: dict[str, Any], got: dict[str, Any]) -> str | None:
    if (got.get("torch_version"), got.get("schema_version")) != (expected["torch_version"],
                                                                 expected["schema_version"]):
        return f"versions {got.get('torch_version')}/{got.get('schema_version')}, torch says " \
               f"{expected['torch_version']}/{expected['schema_version']}"
    ours = sorted(got.get("programs", []), key=lambda p: p["name"])
    if [p["name"] for p in ours] != [p["name"] for p in expected["programs"]]:
        return f"programs {[p['name'] for p in ours]}, torch has {[p['name'] for p in expected['programs']]}"
    for exp, mine in zip(expected["programs"], ours):
        for field in INFO_FIELDS:
            if exp[field] != mine.get(field):
                return f"{exp['name']}: field {field!r} differs from torch: ours " \
                       f"{json.dumps(mine.get(field))[:200]}, torch {json.dumps(exp[field])[:200]}"
    return None


def check_render(path: Path, work: Path) -> Outcome:
    out = work / f"{path.stem}.svg"
    inv = invoke(["render", str(path), "-o", str(out)], TIMEOUT_S["render"])
    problem = process_problem(inv, "render")
    if problem is None:
        problem = svg_problem(out, _op_node_names(path))
    return Outcome("render", problem is None, inv.seconds, problem or "")


def _op_node_names(path: Path) -> set[str]:
    from pt2_viewer.core.pt2.reader import read_archive

    graph = read_archive(path).program().graph
    return {n.name for n in graph.nodes}


def svg_problem(svg: Path, node_names: set[str]) -> str | None:
    """An SVG that draws at least one of the program's nodes, by name (or a collapsed group around them)."""
    if not svg.exists() or svg.stat().st_size < 500:
        return f"no SVG written at {svg}" if not svg.exists() else f"an SVG of {svg.stat().st_size} bytes"
    text = svg.read_text(encoding="utf-8", errors="replace")
    if "<text" not in text:
        return "the SVG has no text: no node is drawn"
    import re

    labels = set(re.findall(r">([^<>]+)</text>", text))
    if not labels & node_names and not any(": " in label for label in labels):
        return f"the SVG names none of the program's nodes (labels: {sorted(labels)[:5]})"
    return None


# The window as `--screenshot` saves it: 1400x900, the graph view left of the side panels, below the toolbar. The
# minimap sits in one of the view's corners (top-left or bottom-right) and is left out: only the graph itself counts.
GRAPH_AREA = (0.0, 0.11, 0.58, 0.95)  # left, top, right, bottom as fractions of the window
MINIMAPS = ((0.0, 0.0, 0.15, 0.28), (0.44, 0.76, 0.6, 1.0))
TILE = (40, 20)  # the graph area is cut into tiles of this size; a tile with a few dark pixels holds some label
MIN_LABEL_ROWS = 5  # rows of tiles holding labels. Calibrated on the zoo: first views that draw the graph have 6
#                     (a 4-node ExportDB program, centred) and more; views with only the inputs drawn over an empty
#                     area (T5, Llama, CLIP decomposed today) 4 or fewer


def screenshot_problem(png: Path) -> str | None:
    """None if the window's graph area shows graph nodes: node labels (dark pixels on the lighter background) at
    several heights, nodes one above another, not only the row of inputs at the top of an empty area."""
    from PySide6.QtGui import QImage

    img = QImage(str(png))
    if img.isNull():
        return f"no readable PNG at {png}"
    w, h = img.width(), img.height()
    x0, y0, x1, y1 = (int(f * d) for f, d in zip(GRAPH_AREA, (w, h, w, h)))
    corners = [(int(a * w), int(b * h), int(c * w), int(d * h)) for a, b, c, d in MINIMAPS]
    sampled = [(x, y, img.pixelColor(x, y)) for x in range(x0, x1, 2) for y in range(y0, y1, 2)
               if not any(a <= x < c and b <= y < d for a, b, c, d in corners)]
    background = Counter(c.rgb() for *_, c in sampled).most_common(1)[0][0]
    ink = Counter((x // TILE[0], y // TILE[1]) for x, y, c in sampled if c.rgb() != background and c.lightness() < 110)
    rows = {ty for (_, ty), n in ink.items() if n >= 4}
    if len(rows) < MIN_LABEL_ROWS:
        return f"the graph area is blank but for {len(rows)} rows of labels (the inputs' row over an empty area?)"
    return None


def check_screenshot(path: Path, work: Path) -> Outcome:
    out = work / f"{path.stem}.png"
    inv = invoke([str(path), "--screenshot", str(out)], TIMEOUT_S["screenshot"])
    problem = process_problem(inv, "screenshot") or screenshot_problem(out)
    return Outcome("screenshot", problem is None, inv.seconds, problem or "")


def torch_outputs(path: Path) -> tuple[list[tuple[str, Any]] | None, str]:
    """torch running the program on its saved sample inputs: (name, leaf) pairs, or None and torch's error. Stored
    with the fixture (tests/torch_reference.py)."""
    from tests.torch_reference import stored

    return stored(path, "outputs", lambda: _torch_outputs(path))  # type: ignore[no-any-return]


def _torch_outputs(path: Path) -> tuple[list[tuple[str, Any]] | None, str]:
    import torch
    import torch.utils._pytree as pytree

    ep = torch_programs(path)["model"]
    args, kwargs = ep.example_inputs
    try:
        with torch.no_grad():
            out = ep.module()(*args, **kwargs)
    except Exception as e:  # whatever torch raises, the command must explain it
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    leaves, _ = pytree.tree_flatten_with_path(out)
    return [("out" + pytree.keystr(p), leaf) for p, leaf in leaves], ""


def _close(a: float | str | None, b: float, scale: float) -> bool:
    if a is None or isinstance(a, str):
        return isinstance(a, str) and not math.isfinite(b)
    return abs(a - b) <= 1e-4 * max(1.0, abs(b), scale)


def outputs_problem(reported: list[dict[str, Any]], expected: list[tuple[str, Any]]) -> str | None:
    """The run's output summaries against torch's outputs: names, dtypes, shapes, min/max/mean and the preview."""
    import torch

    if [o["name"] for o in reported] != [name for name, _ in expected]:
        return f"outputs {[o['name'] for o in reported]}, torch gives {[n for n, _ in expected]}"
    for got, (name, value) in zip(reported, expected):
        if not isinstance(value, torch.Tensor):
            continue
        t = value.detach()
        if got.get("dtype") != str(t.dtype).removeprefix("torch.") or got.get("shape") != list(t.shape):
            return f"{name}: {got.get('dtype')}{got.get('shape')}, torch gives {t.dtype}{list(t.shape)}"
        if t.numel() == 0:
            continue
        f = t.double().reshape(-1) if not t.is_complex() else t.abs().double().reshape(-1)
        good = f[torch.isfinite(f)]
        if not good.numel():
            continue
        scale = float(good.abs().max())
        for stat, want in (("min", float(good.min())), ("max", float(good.max())), ("mean", float(good.mean()))):
            if not _close(got.get(stat), want, scale):
                return f"{name}: {stat} {got.get(stat)}, torch gives {want}"
        preview = got.get("preview", [])
        for i, v in enumerate(preview):
            if not _close(v if not isinstance(v, bool) else float(v), float(f[i]), scale):
                return f"{name}: value [{i}] {v}, torch gives {float(f[i])}"
    return None


def check_run(path: Path, work: Path) -> Outcome:
    expected, torch_error = torch_outputs(path)
    inv, added = invoke_as_user(["run", str(path), "--device", "cpu", "--json", "--warmup", "0", "--runs", "1"], "run")
    if expected is None:
        return _refusal("run", inv, torch_error)
    problem = process_problem(inv, "run")
    if problem is None:
        problem = outputs_problem(json.loads(inv.stdout)["outputs"], expected)
    return Outcome("run", problem is None, inv.seconds, problem or _with(added))


def _with(added: list[str]) -> str:
    """The note for a command that needed more than its plain form."""
    return f"needed {' '.join(added)}" if added else ""


def _refusal(command: str, inv: Invocation, torch_error: str) -> Outcome:
    """torch itself cannot do it: the command must fail with one clear line and no traceback."""
    problem = process_problem(inv, command, expect_success=False)
    if problem is None and inv.returncode == 0:
        problem = f"succeeded where torch raises {torch_error}"
    message = _first_error_line(inv.stderr)
    if problem is None and not message.startswith(("error", "pt2-viewer:")):
        problem = f"no clear message for torch's {torch_error}: {message}"
    return Outcome(command, problem is None, inv.seconds, problem or f"explained: {message}")


def op_histogram(graph_module: Any) -> Counter[str]:
    """call_function targets over every graph as the archive spells them, without `torch.ops.` and without getitem
    (folded into its producer by the format)."""
    import operator

    import torch.fx

    from tests.torch_reference import archive_spelling

    counts: Counter[str] = Counter()
    for _, module in graph_module.named_modules():
        if isinstance(module, torch.fx.GraphModule):
            for node in module.graph.nodes:
                if node.op == "call_function" and node.target is not operator.getitem:
                    counts[archive_spelling(node.target).removeprefix("torch.ops.")] += 1
    return counts


def torch_core_ops(path: Path) -> tuple[Counter[str] | None, str]:
    """The ops torch's run_decompositions gives (or its error). Stored with the fixture (tests/torch_reference.py)."""
    from tests.torch_reference import stored

    ops, error = stored(path, "core_ops", lambda: _torch_core_ops(path))
    return (Counter(ops) if ops is not None else None), error


def _torch_core_ops(path: Path) -> tuple[dict[str, int] | None, str]:
    import torch

    ep = torch_programs(path)["model"]
    try:
        return dict(op_histogram(ep.run_decompositions(torch.export.default_decompositions()).graph_module)), ""
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"


def _histogram_difference(ours: Counter[str], theirs: Counter[str]) -> str | None:
    diff = {op: (ours.get(op, 0), theirs.get(op, 0)) for op in set(ours) | set(theirs)
            if ours.get(op, 0) != theirs.get(op, 0)}
    if not diff:
        return None
    shown = ", ".join(f"{op} {a} vs {b}" for op, (a, b) in sorted(diff.items())[:4])
    return f"{len(diff)} ops differ from torch's (ours vs torch): {shown}"


def check_decompose(path: Path, work: Path) -> Outcome:
    expected, torch_error = torch_core_ops(path)
    out = work / f"{path.stem}.core.pt2"
    inv, added = invoke_as_user(["decompose", str(path), "--to", "core", "-o", str(out), "--json"], "decompose")
    if expected is None:
        return _refusal("decompose", inv, torch_error)
    problem = process_problem(inv, "decompose")
    if problem is None:
        result = json.loads(inv.stdout)
        reported = Counter({row["op"]: row["after"] for row in result["op_diff"] if row["after"]})
        problem = _histogram_difference(reported, expected)
        if problem is None:
            written = op_histogram(torch_programs(out)["model"].graph_module)
            problem = _histogram_difference(written, expected)
            problem = f"the written {out.name}: {problem}" if problem else None
    return Outcome("decompose", problem is None, inv.seconds, problem or _with(added))


def check_reopen(path: Path, work: Path) -> Outcome:
    """What the window reads on a second open: the parsed-program cache's entry (core/pt2/parsed_cache.py), in a
    cache folder of this check's own, decoded into the same archive the reader builds from the JSON."""
    from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
    from pt2_viewer.core.pt2.reader import read_archive

    start = time.perf_counter()
    cache = ParsedProgramCache(Path(tempfile.mkdtemp(prefix="parsed-", dir=work)))
    cache.read(path)
    reopened = cache.read(path)
    expected = read_archive(path)
    problem = None
    if (cache.misses, cache.hits) != (1, 1):
        problem = f"the second open was not a cache hit (misses {cache.misses}, hits {cache.hits})"
    elif reopened != expected:
        problem = _first_difference(reopened, expected)
    return Outcome("reopen", problem is None, time.perf_counter() - start, problem or "")


def _first_difference(got: Any, expected: Any) -> str:
    """Where a program read back from the cache first differs from the reader's: a node, else the program."""
    for mine, theirs in zip(got.programs, expected.programs, strict=False):
        for (_, g), (_, h) in zip(mine.all_graphs(), theirs.all_graphs(), strict=False):
            for n, m in zip(g.nodes, h.nodes, strict=False):
                if n != m:
                    return f"{mine.name}: node {m.name!r} differs from the reader's: {str(n)[:200]}"
        if mine != theirs:
            return f"program {mine.name!r} differs from the reader's (outside its nodes)"
    return "the archive differs from the reader's (outside its programs)"


CHECKS: dict[str, Callable[[Path, Path], Outcome]] = {
    "info": check_info, "screenshot": check_screenshot, "render": check_render, "run": check_run,
    "decompose": check_decompose, "reopen": check_reopen,
}


def check_program(path: Path, work: Path, commands: tuple[str, ...] = COMMANDS) -> list[Outcome]:
    """Every command on one program; a check that itself breaks (torch's side of it) is that cell's FAIL, so one
    program cannot stop the table."""
    outcomes = []
    for command in commands:
        start = time.perf_counter()
        try:
            outcomes.append(CHECKS[command](path, work))
        except Exception as e:
            outcomes.append(Outcome(command, False, time.perf_counter() - start,
                                    f"the check itself failed: {type(e).__name__}: {str(e).strip()[:300]}"))
    return outcomes


# --------------------------------------------------------------------------------------------------------------------
# The table.


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="pattern", help="only programs whose name or family matches (substring or glob)")
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated subset of {COMMANDS}")
    parser.add_argument("--keep", type=Path, help="keep screenshots, SVGs and outputs in this folder")
    args = parser.parse_args(argv)
    commands = tuple(c for c in args.commands.split(",") if c)
    unknown = set(commands) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown commands {sorted(unknown)}")

    from tests.programs import ExportFailed
    from tests.zoo.cache import programs_of, zoo_path
    from tests.zoo.registry import ENTRIES, matches

    programs = [p for p in programs_of(list(ENTRIES.values()))
                if not args.pattern or matches(args.pattern, p.id, p.entry.family)]
    if not programs:
        print(f"no zoo program matches {args.pattern!r}", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="pt2v-zoo-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, float, list[Outcome] | str]] = []
    for program in programs:
        start = time.perf_counter()
        try:
            path = zoo_path(program)
        except ExportFailed as e:
            rows.append((program.id, program.entry.family, time.perf_counter() - start, e.reason))
            print(f"{program.id}: torch cannot export it: {e.reason}", file=sys.stderr, flush=True)
            continue
        export_s = time.perf_counter() - start
        outcomes = check_program(path, work, commands)
        rows.append((program.id, program.entry.family, export_s, outcomes))
        print(f"{program.id}: " + "  ".join(f"{o.command} {o.cell()}" for o in outcomes), file=sys.stderr,
              flush=True)
    print(render_table(rows, commands))
    failed = [(pid, o) for pid, _, _, outcomes in rows if not isinstance(outcomes, str)
              for o in outcomes if not o.ok]
    notes = [(pid, o) for pid, _, _, outcomes in rows if not isinstance(outcomes, str)
             for o in outcomes if o.ok and o.message]
    for pid, o in notes:
        print(f"  note {pid} {o.command}: {o.message}")
    for pid, outcomes in ((r[0], r[3]) for r in rows if isinstance(r[3], str)):
        print(f"  not exported {pid}: {outcomes}")
    for pid, o in failed:
        print(f"  FAIL {pid} {o.command}: {o.message}")
    print(f"{len(rows)} programs, {len(failed)} failures" + (f"; files in {work}" if args.keep else ""))
    return 1 if failed else 0


def render_table(rows: list[tuple[str, str, float, list[Outcome] | str]], commands: tuple[str, ...]) -> str:
    header = ["program", "family", "export s", *commands]
    body = []
    for pid, family, export_s, outcomes in rows:
        cells = [o.cell() for o in outcomes] if not isinstance(outcomes, str) else ["(not exported)"] + \
            [""] * (len(commands) - 1)
        body.append([pid, family, f"{export_s:.1f}", *cells])
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
