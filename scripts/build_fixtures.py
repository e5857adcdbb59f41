"""Build every test fixture before the tests run (`make fixtures`, which `make test` calls), with torch's answers.

Each fixture is cached by its own builder (tests/programs.py `builder_key`, tests/zoo/cache.py `entry_dir`, ...) and
torch's version under `.cache/`, so a second run only checks that everything is there (seconds); a changed builder
rebuilds its own files only. With the archives it stores torch's reference answers (tests/torch_reference.py
`stored`): what torch's loader says each program holds (info, edges, HOP operands), and for the zoo programs the test
suite runs through every command, torch's outputs on the saved inputs and its core-ATen op counts. Tests then compare
against stored truth and no test pays for a build.

    .venv/bin/python scripts/build_fixtures.py [--jobs N] [--only GROUP,...] [-k PATTERN]

Groups: programs (tests/programs.py and their references), zoo (the zoo programs tests use, and references),
pipeline (.pte and AOTInductor files), doctor (the doctor's diagnoses, tests/core/export/doctor_runs.py), helpers
(the other fixture modules under tests/: diff, run, deploy and issue-30 programs, and any module under tests/ that
defines `prebuild_fixtures()`). Builds run
in a small process pool (`--jobs`, default the machine's cores, at most 2): nothing else runs then. A build torch
refuses is cached as its `.failed.txt` (the tests skip or fail naming it); a builder that breaks is printed and makes
the script exit 1.

Adding a fixture: give it a builder that caches itself (tests/programs.py `cached_file`, `cache_dir(builder)`), and a
function `prebuild_fixtures()` in its module (under tests/, not a test_*.py) that builds what the tests use; this
script finds it by that name and runs it in the pool.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# The zoo programs the tests open (tests/test_zoo.py, tests/core/jobs/test_loading.py, the report, numerics, folding
# and first-view tests, the .pte pipeline's sources and `make zoo -k exportdb_scalar*` in tests/test_zoo.py). One
# missing here is still built by the first test that asks, only slower.
ZOO_ENTRIES = ("resnet18", "vit", "llama", "t5", "nn_lstm", "efficientnet_b0", "mobilenet_v3_small", "bert", "mamba",
               "deepseek_moe", "pt2e_cnn", "torchao_int8", "bart", "distilbert", "gemma", "qwen2", "nn_transformer",
               "exportdb_scalar_output")
# tests/test_zoo.py runs these through every command against torch's stored answers.
ZOO_REFERENCES = ("resnet18", "resnet18.decomposed", "vit", "llama.decomposed", "t5", "nn_lstm", "nn_lstm.decomposed")
GROUPS = ("programs", "zoo", "pipeline", "doctor", "helpers")
# Fixture modules of other changes, by the function that builds one case and the cases the tests use.
HELPERS = {"tests.diff_programs": ("diff_program_path", "CASES"), "tests.run_programs": ("run_program_path", "CASES"),
           "tests.issue30_programs": ("strict_cond_branches", None)}
DEPLOYED = (("mobilenet_v3_small", "xnnpack"), ("nn_transformer", "portable"), ("nn_transformer", "xnnpack"))
PREBUILD = "prebuild_fixtures"

Task = tuple[str, ...]  # (group, name, ...): picklable, run by `build` in a pool process


def tasks(groups: tuple[str, ...]) -> Iterator[Task]:
    """Every build, costliest first so the pool ends together."""
    if "zoo" in groups:
        yield from (("zoo", name) for name in ZOO_ENTRIES)
    if "doctor" in groups:
        from tests.core.export.test_fixes import EXPECTED  # the scripts the fix tests diagnose

        yield from (("doctor", name) for name in sorted(EXPECTED))
        yield ("doctor", "tutorial")
        yield ("doctor", "uses_my_ops")
    if "pipeline" in groups:
        from tests.zoo.pipeline import PTE_KINDS, PTE_MODELS

        yield from (("pte", model, kind) for model in PTE_MODELS for kind in PTE_KINDS)
        yield from (("small_pte", kind) for kind in PTE_KINDS)
        yield from (("aoti", flag) for flag in ("", "with_program", "package", "traced"))
    if "helpers" in groups:
        yield from _helper_tasks()
    if "programs" in groups:
        from tests.programs import all_cases

        yield from (("program", name) for name in all_cases())


def _helper_tasks() -> Iterator[Task]:
    """The other fixture modules' builds; a module or function renamed since is left to the tests that use it."""
    import importlib

    for module, (function, cases) in HELPERS.items():
        try:
            imported = importlib.import_module(module)
            getattr(imported, function)
            names = list(getattr(imported, cases)) if cases else [""]
        except (ImportError, AttributeError) as e:
            print(f"fixtures: {module}.{function} not found ({e}); its tests build it", file=sys.stderr)
            continue
        yield from (("helper", module, function, name) for name in names)
    yield from (("deployed", model, backend) for model, backend in DEPLOYED)
    for path in sorted((REPO_ROOT / "tests").rglob("*.py")):
        if not path.name.startswith(("test_", "conftest")) and f"def {PREBUILD}(" in path.read_text(encoding="utf-8"):
            yield ("prebuild", ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts))


def build(task: Task) -> tuple[Task, float, str]:
    """Build one fixture (cached: nothing to do when it is there) and its stored answers; (task, seconds, note)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from tests.programs import ExportFailed

    start = time.perf_counter()
    try:
        note = BUILDERS[task[0]](*task[1:])
    except ExportFailed as e:
        note = f"not built (a refusal is cached, a timeout not): {e.reason[:120]}"
    return task, time.perf_counter() - start, note


def _program(name: str) -> str:
    from tests.programs import program_path
    from tests.torch_reference import expected_edges, expected_hop_subgraphs, expected_info

    path = program_path(name)
    expected_info(path), expected_edges(path), expected_hop_subgraphs(path)
    return ""


def _zoo(name: str) -> str:
    from scripts.zoo import torch_core_ops, torch_outputs
    from tests.programs import ExportFailed
    from tests.torch_reference import expected_info
    from tests.zoo.cache import ZooProgram, zoo_path
    from tests.zoo.registry import ENTRIES

    notes = []
    for decomposed in (False, True):
        program = ZooProgram(ENTRIES[name], decomposed)
        try:
            path = zoo_path(program)
        except ExportFailed as e:
            notes.append(f"{program.id} not built: {e.reason[:100]}")
            continue
        if program.id in ZOO_REFERENCES:
            expected_info(path), torch_outputs(path), torch_core_ops(path)
    return "; ".join(notes)


def _doctor(name: str) -> str:
    from tests.core.export.doctor_runs import SCRIPTS, diagnosed
    from tests.programs import SEED_TUTORIAL

    if name == "tutorial":
        diagnosed("tutorial", SEED_TUTORIAL)
    elif name == "uses_my_ops":
        folder = SCRIPTS / "two_files"
        diagnosed("uses_my_ops", folder / "uses_my_ops.py", (folder / "my_ops.py",))
    else:
        diagnosed(name)
    return ""


def _pte(model: str, kind: str) -> str:
    from tests.pte_reference import executorch_answer
    from tests.zoo.pipeline import pte_path

    executorch_answer(pte_path(model, kind))  # ExecuTorch's own reading, stored beside it
    return ""


def _small_pte(kind: str) -> str:
    from tests.zoo.pipeline import small_pt2, small_pte

    small_pt2(), small_pte(kind)
    return ""


def _aoti(flag: str) -> str:
    if flag == "package":
        from tests.aoti_package import package_path

        package_path()
    elif flag == "traced":
        from tests import aoti_package

        aoti_package.traced_package()
    else:
        from tests.zoo.pipeline import aoti_path

        aoti_path(with_program=flag == "with_program")
    return ""


def _helper(module: str, function: str, name: str) -> str:
    import importlib

    build = getattr(importlib.import_module(module), function)
    build(name) if name else build()
    return ""


def _deployed(model: str, backend: str) -> str:
    from tests.deploy_programs import executorch_delegation, lowered

    executorch_delegation(lowered(model, backend))  # ExecuTorch's own answer about it, stored beside it
    return ""


def _prebuild(module: str) -> str:
    import importlib

    getattr(importlib.import_module(module), PREBUILD)()
    return ""


BUILDERS: dict[str, Callable[..., str]] = {"program": _program, "zoo": _zoo, "doctor": _doctor, "pte": _pte,
                                           "small_pte": _small_pte, "aoti": _aoti, "helper": _helper,
                                           "deployed": _deployed, "prebuild": _prebuild}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="builds at once (default: %(default)s)")
    parser.add_argument("--only", default=",".join(GROUPS), help=f"comma-separated groups of {GROUPS}")
    parser.add_argument("-k", dest="pattern", help="only tasks whose name matches this glob")
    args = parser.parse_args(argv)
    groups = tuple(g for g in args.only.split(",") if g)
    if set(groups) - set(GROUPS):
        parser.error(f"unknown groups {sorted(set(groups) - set(GROUPS))}")
    todo = [t for t in tasks(groups) if not args.pattern or fnmatch.fnmatch(":".join(t), args.pattern)]
    start = time.perf_counter()
    broken: list[str] = []
    built = 0
    # Pool processes start fresh (spawn): torch is imported in each, never inherited half-initialised.
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(build, task): task for task in todo}
        for future in as_completed(futures):
            label = ":".join(futures[future])
            try:
                _, seconds, note = future.result()
            except Exception:
                broken.append(label)
                print(f"fixtures: {label} BROKE\n{traceback.format_exc()}", file=sys.stderr, flush=True)
                continue
            built += seconds > 1.0
            if seconds > 1.0 or note:
                print(f"fixtures: {label} {seconds:.1f} s {note}".rstrip(), flush=True)
    print(f"fixtures: {len(todo)} ready ({built} built now) in {time.perf_counter() - start:.0f} s"
          + (f"; {len(broken)} builders broke: {', '.join(broken)}" if broken else ""), flush=True)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
