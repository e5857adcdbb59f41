"""Eager CPU profiles of zoo programs made by this machine's torch, for the profile importer's tests (issue 41).

`profile_of(program_id)` is a folder built once per torch version (tests/programs.py `cached_file`, `cache_dir`):
- `trace.json`: `torch.profiler.profile(activities=[CPU])` around one call of the saved program's `ep.module()` on
  its saved sample inputs (after one call outside the profile, so the profile holds the program alone), exported
  with `prof.export_chrome_trace`;
- `ops.json`: the profiler's own totals, in microseconds, by op name: `key_averages` (every event of that name,
  nested or not, from `prof.key_averages()`) and `top_level` (the events no other op encloses, from
  `prof.events()`'s `cpu_parent`), each `{"count", "us"}` from `cpu_time_total`.
The zoo programs are the zoo cache's (tests/zoo/cache.py), already exported by `make fixtures`.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils import _pytree as pytree

from tests.programs import cache_dir, cached_file
from tests.zoo.cache import program_by_id, zoo_path

PROGRAMS = ("resnet18", "nn_transformer")  # the zoo's CNN and transformer


def program_path(program_id: str) -> Path:
    return zoo_path(program_by_id(program_id))


def _totals(events: list) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for e in events:
        row = out.setdefault(e.key if hasattr(e, "key") else e.name, {"count": 0, "us": 0.0})
        row["count"] += getattr(e, "count", 1)
        row["us"] += e.cpu_time_total
    return out


def _record(program: Path, folder: Path) -> None:
    ep = torch.export.load(program)
    assert ep.example_inputs is not None
    module = ep.module()
    args, kwargs = pytree.tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, ep.example_inputs)
    folder.mkdir(parents=True)
    with torch.no_grad():
        module(*args, **kwargs)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            module(*args, **kwargs)
    prof.export_chrome_trace(str(folder / "trace.json"))
    top_level = [e for e in prof.events() if e.cpu_parent is None]
    ops = {"key_averages": _totals(list(prof.key_averages())), "top_level": _totals(top_level)}
    (folder / "ops.json").write_text(json.dumps(ops, indent=1), encoding="utf-8")


def profile_of(program_id: str) -> Path:
    """The folder of `program_id`'s eager CPU profile: `trace.json` and `ops.json`."""
    program = program_path(program_id)
    return cached_file(cache_dir(profile_of, program_id) / f"{program_id}.profile",
                       lambda tmp: _record(program, tmp))


def prebuild_fixtures() -> None:
    """`make fixtures`: the profile of each program."""
    for program_id in PROGRAMS:
        profile_of(program_id)
