"""What an AOTInductor wrapper says about its inputs, read as text: each input's dtype, device, sizes and strides, and
the ranges of its dynamic dims, from the input checks torch generates (`check_input_N`: "unmatched dtype", "dim value
is too small at 0, expected it to be >= 2", "unmatched dim value at 1, expected: 4", "unmatched device type") and
the symbols `run_impl` binds (`int64_t s77 = arg2_1_size[0];`).

A package of compiled code alone holds no program to make inputs from; these are enough to make tensors the
compiled code accepts (core/run/aoti_job.py). No code is loaded here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_CHECK_START = re.compile(r"static void check_input_(\d+)\(")
_HANDLE = re.compile(r"ConstantHandle (\w+) = ConstantHandle\(input_handles\[(\d+)\]\)")
_DTYPE = re.compile(r"(\w+)_expected_dtype = aoti_torch_dtype_(\w+)\(\)")
_LOW = re.compile(r"if \((\w+)_size\[(\d+)\] < (-?\d+)\)")
_HIGH = re.compile(r"if \((\w+)_size\[(\d+)\] > (-?\d+)\)")
_STATIC = re.compile(r"if \((-?\d+) != (\w+)_size\[(\d+)\]\)")
_STRIDE = re.compile(r"if \((-?\d+) != (\w+)_stride\[(\d+)\]\)")
_DEVICE = re.compile(r"(\w+)_expected_device_type = (\d+);")
_SYMBOL = re.compile(r"int64_t (\w+) = (\w+)_size\[(\d+)\];")
_ASSERT = re.compile(r"assert_size_stride\((\w+), \{([^}]*)\}")
DEVICE_TYPES = {0: "cpu", 1: "cuda", 2: "mkldnn", 9: "xpu", 13: "mps"}  # c10::DeviceType numbers


@dataclass(frozen=True)
class AotiDim:
    """One dim of an input: a fixed `size`, or dynamic (`size` None) with its symbol and the range torch checks."""

    size: int | None
    symbol: str = ""
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class AotiInput:
    index: int
    name: str  # the wrapper's name for it (arg2_1)
    dtype: str  # torch's name: float32, int64, bool ...
    device: str  # "cpu", "cuda" ...
    dims: tuple[AotiDim, ...]
    strides: tuple[int | None, ...]  # None where the stride is not fixed

    @property
    def dynamic(self) -> bool:
        return any(d.size is None for d in self.dims)


def input_checks(text: str) -> list[AotiInput]:
    """Every input the wrapper checks, in order; [] for a wrapper without input checks."""
    lines = text.splitlines()
    symbols: dict[tuple[str, int], str] = {}
    ranks: dict[str, int] = {}
    for line in lines:
        m = _SYMBOL.search(line)
        if m:
            symbols.setdefault((m.group(2), int(m.group(3))), m.group(1))
        a = _ASSERT.search(line)
        if a:
            ranks.setdefault(a.group(1), len([x for x in a.group(2).split(",") if x.strip()]))
    inputs: list[AotiInput] = []
    i = 0
    while i < len(lines):
        m = _CHECK_START.search(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("}"):
            j += 1
        inputs.append(_one(int(m.group(1)), "\n".join(lines[i:j]), symbols, ranks))
        i = j
    return sorted(inputs, key=lambda x: x.index)


def _one(index: int, body: str, symbols: dict[tuple[str, int], str], ranks: dict[str, int]) -> AotiInput:
    handle = _HANDLE.search(body)
    name = handle.group(1) if handle else f"input_{index}"
    dtype = _DTYPE.search(body)
    device = _DEVICE.search(body)
    low = {int(d): int(v) for _n, d, v in _LOW.findall(body)}
    high = {int(d): int(v) for _n, d, v in _HIGH.findall(body)}
    static = {int(d): int(v) for v, _n, d in _STATIC.findall(body)}
    strides = {int(d): int(v) for v, _n, d in _STRIDE.findall(body)}
    seen = [*low, *high, *static, *strides]
    rank = ranks.get(name, max(seen) + 1 if seen else 0)
    dims = tuple(AotiDim(static[d]) if d in static else
                 AotiDim(None, symbols.get((name, d), f"{name}.shape[{d}]"), low.get(d), high.get(d))
                 for d in range(rank))
    return AotiInput(index, name, dtype.group(2) if dtype else "float32",
                     DEVICE_TYPES.get(int(device.group(2)), "cpu") if device else "cpu", dims,
                     tuple(strides.get(d) for d in range(rank)))


def choose_sizes(inputs: list[AotiInput], asked: dict[str, int] | None = None) -> dict[str, int]:
    """A size for each dynamic dim's symbol: the one asked for (by symbol, or `name.shape[i]`), else the smallest in
    its range that is at least 2 (torch specializes 0 and 1). Raises ValueError naming a size outside its range."""
    asked = dict(asked or {})
    ranges: dict[str, tuple[int, int | None]] = {}
    aliases: dict[str, str] = {}
    for x in inputs:
        for d, dim in enumerate(x.dims):
            if dim.size is not None:
                continue
            lo, hi = ranges.get(dim.symbol, (0, None))
            lo = max(lo, dim.low if dim.low is not None else 0)
            hi = dim.high if hi is None else (hi if dim.high is None else min(hi, dim.high))
            ranges[dim.symbol] = (lo, hi)
            aliases[f"{x.name}.shape[{d}]"] = aliases[f"input_{x.index}.shape[{d}]"] = dim.symbol
    sizes: dict[str, int] = {}
    for key, value in asked.items():
        symbol = aliases.get(key, key)
        if symbol not in ranges:
            raise ValueError(f"'{key}' is not a dynamic dim of the package's inputs "
                             f"(dynamic: {', '.join(sorted(ranges)) or 'none'}).")
        sizes[symbol] = int(value)
    for symbol, (lo, hi) in ranges.items():
        if symbol not in sizes:
            sizes[symbol] = max(lo, 2) if hi is None else min(max(lo, 2), hi)
        value = sizes[symbol]
        if value < lo or (hi is not None and value > hi):
            raise ValueError(f"{symbol}={value} is outside the range the package accepts: [{lo}, "
                             f"{'inf' if hi is None else hi}].")
    return sizes


def shape_of(x: AotiInput, sizes: dict[str, int]) -> list[int]:
    return [d.size if d.size is not None else sizes[d.symbol] for d in x.dims]
