"""Real `.pt2` archives for the tests: programs exported and saved by this machine's torch, cached on disk.

The reader is only as good as the files it was proved on, so every fixture here is what `torch.export.save` (or
`package_pt2` for several programs in one file) really writes: every ExportDB case, control flow (cond, map),
dynamic shapes (Dim.AUTO, named Dims), unbacked symbols, a custom op, buffer mutation, a decomposed program, a
multi-output op, and a two-program archive.

Exporting costs seconds per program, so each archive is built once and cached under
`.cache/test-programs/<torch version>/NAME/<builder key>/NAME.pt2`. The builder key (`builder_key`) hashes the
builder's own source and the source of every function and class of its module it reaches, so editing one program
re-exports that program only (`make fixtures` builds them all before the tests, tests/README.md). An export that torch
refuses (some ExportDB cases are expected to fail) is cached as `NAME.failed.txt` holding torch's reason, and the tests
skip that program naming the reason. Other fixture modules reuse the same helpers: `builder_key`, `cached_file` (build
once under a key, atomically, under a lock, failures cached) and `cache_dir`.

Use `from tests.programs import pt2_path` in a test module (or in conftest.py) for the `pt2_path` fixture:
`pt2_path("topk_cond")` returns the archive's path.
"""
from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import tempfile
import traceback
import types
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch._higher_order_ops.map import map as hop_map
from torch.export import Dim, ExportedProgram

from tests.fixture_root import FIXTURE_ROOT

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_ROOT = FIXTURE_ROOT / "test-programs"
# The torch.export tutorial, the map of what users meet; it lies in shared/ beside the checkout (also in CI).
SEED_TUTORIAL = REPO_ROOT.parent / "shared" / "seed" / "torch_export_tutorial.py"

Programs = dict[str, ExportedProgram]  # model name in the archive -> program


# --------------------------------------------------------------------------------------------------------------------
# A custom op, as a user would define one. Guarded so that importing this file under two module names (pytest's
# rootdir insertion and `tests.programs`) does not register the op twice.
CUSTOM_OP = "pt2v_test::scale_add"


def define_custom_op() -> None:
    """Register `pt2v_test::scale_add` (once per process): at import, and named by the builder that uses it, so its
    source is part of that builder's cache key."""
    if hasattr(getattr(torch.ops, "pt2v_test", None), "scale_add"):
        return

    @torch.library.custom_op(CUSTOM_OP, mutates_args=())
    def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return x + alpha * y

    @scale_add.register_fake
    def _scale_add_fake(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return torch.empty_like(x)


define_custom_op()


# --------------------------------------------------------------------------------------------------------------------
# Hand-written programs, each covering something the reader must get right.


class TopkCond(torch.nn.Module):
    """A multi-output op (topk: one archive node, two FX getitems) feeding a cond."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(self.linear(x), 3)

        def true_fn(v: torch.Tensor) -> torch.Tensor:
            return v.sin() * 2

        def false_fn(v: torch.Tensor) -> torch.Tensor:
            return v.cos() + 1

        return torch.cond(values.sum() > 0, true_fn, false_fn, (values,)), indices


class CondMap(torch.nn.Module):
    """map over the leading dim whose body holds a cond (nested subgraphs), then a top-level cond."""

    def forward(self, xs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        def body(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.cond(x.sum() > 0, lambda a, b: a + b, lambda a, b: a - b, (x, y))

        mapped = hop_map(body, xs, y)
        return torch.cond(mapped.mean() > 0, lambda m: m.relu(), lambda m: m.abs(), (mapped,))


class DynamicShapes(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x @ y).relu() + x.shape[0]


class Unbacked(torch.nn.Module):
    """`.item()` makes an unbacked symbol; torch._check bounds it, which shows in range_constraints."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= 6)
        return x[:k].sum(0) + torch.zeros(k).sum()


class CustomOp(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.ops.pt2v_test.scale_add(x, y, 0.5).relu()


class BatchNormTrain(torch.nn.Module):
    """BatchNorm in train mode plus a counter buffer: both mutate buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.scale = torch.ones(4, 1, 1)  # a plain tensor attribute: lifted as CONSTANT_TENSOR

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1)
        return self.bn(self.conv(x)) * self.scale


class SplitChunks(torch.nn.Module):
    """A `-> Tensor[]` op with one chunk unused, and a user input mutated in place."""

    def forward(self, x: torch.Tensor, acc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, _, c = torch.split(x, 2, dim=1)
        acc.add_(a.sum())
        return a * c, acc


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).softmax(-1)


def _topk_cond() -> Programs:
    return {"model": torch.export.export(TopkCond(), (torch.randn(4, 8),))}


def _cond_map() -> Programs:
    return {"model": torch.export.export(CondMap(), (torch.randn(3, 4), torch.randn(4)))}


def _dynamic_shapes() -> Programs:
    batch = Dim("batch", min=2, max=1024)
    shapes = {"x": {0: batch, 1: Dim.AUTO}, "y": {0: Dim.AUTO, 1: Dim.AUTO}}
    example = (torch.randn(4, 5), torch.randn(5, 6))
    return {"model": torch.export.export(DynamicShapes(), example, dynamic_shapes=shapes)}


def _unbacked() -> Programs:
    return {"model": torch.export.export(Unbacked(), (torch.randn(8, 3), torch.tensor(4)))}


def _custom_op() -> Programs:
    define_custom_op()
    return {"model": torch.export.export(CustomOp(), (torch.randn(3), torch.randn(3)))}


def _batchnorm_train() -> Programs:
    return {"model": torch.export.export(BatchNormTrain().train(), (torch.randn(2, 3, 6, 6),))}


def _batchnorm_train_decomposed() -> Programs:
    """run_decompositions turns the training IR's in-place updates into BUFFER_MUTATION outputs."""
    ep = torch.export.export(BatchNormTrain().train(), (torch.randn(2, 3, 6, 6),))
    return {"model": ep.run_decompositions()}


def _split_chunks() -> Programs:
    ep = torch.export.export(SplitChunks(), (torch.randn(2, 6), torch.zeros(())))
    return {"model": ep.run_decompositions()}


def _two_programs() -> Programs:
    return {
        "model": torch.export.export(Small(), (torch.randn(3, 4),)),
        "other": torch.export.export(TopkCond(), (torch.randn(4, 8),)),
    }


class TutorialDynamic(torch.nn.Module):
    """The torch.export tutorial's DynamicModel (w [6, 5], x [4], y [8, 4], z [32])."""

    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(5, 3)

    def forward(self, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.l(w), (x + y).flatten() + z


def _tutorial_dims(spec: object) -> Programs:
    """The tutorial's DynamicModel with its dims `spec` (Dim.AUTO or Dim.DYNAMIC): ranges with no upper end. w's
    second dim feeds Linear(5, 3), so it is static (Dim.DYNAMIC would refuse to specialise it)."""
    example = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
    shapes = {"w": (spec, Dim.AUTO), "x": (spec,), "y": (spec, spec), "z": (spec,)}
    return {"model": torch.export.export(TutorialDynamic(), example, dynamic_shapes=shapes)}


class TutorialMixed(torch.nn.Module):
    """The tutorial's mixed inputs and specs: (Dim.AUTO, None), None, an int and a bool."""

    def forward(self, tensor_0: torch.Tensor, tensor_1: torch.Tensor, int_val: int, bool_val: bool) -> torch.Tensor:
        out = tensor_0.sum(1) * int_val + tensor_1.sum()
        return out.neg() if bool_val else out


def _tutorial_mixed() -> Programs:
    inputs = (torch.randn(4, 4), torch.randn(3, 3), 16, False)
    shapes = {"tensor_0": (Dim.AUTO, None), "tensor_1": None, "int_val": None, "bool_val": None}
    return {"model": torch.export.export(TutorialMixed(), inputs, dynamic_shapes=shapes)}


class InputKinds(torch.nn.Module):
    """Every kind of user input export takes: a nested pytree of tensors, a dynamic int, a float, a bool, a str,
    None, and keyword inputs (a tensor and a None)."""

    def forward(self, x: torch.Tensor, pair: dict, n: int, scale: float, flag: bool, mode: str, nothing: None, *,
                bias: torch.Tensor, extra: None = None) -> tuple[torch.Tensor, dict]:
        y = x * scale + pair["a"].sum() + pair["b"][0].sum() + n
        y = y + 1 if flag else y
        y = y * 2 if mode == "double" else y
        return y + bias, {"n": n}


def _input_kinds() -> Programs:
    args = (torch.randn(3, 4), {"a": torch.randn(2), "b": [torch.randn(5)]}, 7, 0.5, True, "double", None)
    kwargs = {"bias": torch.randn(4), "extra": None}
    shapes = {"x": (Dim.AUTO, Dim.STATIC), "pair": {"a": None, "b": [None]}, "n": Dim.DYNAMIC, "scale": None,
              "flag": None, "mode": None, "nothing": None, "bias": None, "extra": None}
    return {"model": torch.export.export(InputKinds(), args, kwargs, dynamic_shapes=shapes)}


def define_torchvision_schemas() -> None:
    """Importing transformers' models imports torchvision, whose Python registers fake kernels for
    torchvision::nms and ::qnms; with a torchvision whose C++ ops do not load for this CPU torch, those ops do not
    exist and the import fails. Defining the two schemas first (only when missing) lets the import succeed."""
    schemas = {"nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
               "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"}
    for name, schema in schemas.items():
        try:
            torch._C._dispatch_find_schema_or_throw(f"torchvision::{name}", "")
        except RuntimeError:
            torch.library.define(f"torchvision::{name}", schema)


def _hf_tiny_bert() -> Programs:
    """A real HuggingFace BERT, built from its Config with small widths; it returns a transformers ModelOutput."""
    define_torchvision_schemas()
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64)
    model = BertModel(config).eval()
    ids = torch.randint(0, 64, (2, 8))
    seq = Dim("seq", min=2, max=64)
    ep = torch.export.export(model, (ids,), {"attention_mask": torch.ones(2, 8, dtype=torch.int64)},
                             dynamic_shapes={"input_ids": {1: seq}, "attention_mask": {1: seq}})
    return {"model": ep}


class ReluThrice(torch.nn.Module):
    """One `relu` module called three times inside its parent (as ResNet's blocks call theirs twice); the parent is
    itself called twice, so torch keys every call apart (`block.relu`, `block.relu@1`, ... `block@1`)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 8)
        self.relu = torch.nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.fc2(self.relu(self.fc1(self.relu(x))))) + x


class RepeatedCalls(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = ReluThrice()
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.block(x)))


def _repeated_calls() -> Programs:
    return {"model": torch.export.export(RepeatedCalls(), (torch.randn(3, 8),))}


class AttentionBlock(torch.nn.Module):
    """nn.MultiheadAttention: its `out_proj` Linear is never called as a module; the attention's own ops use its
    weight and bias."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.attn(x, x, x)
        return self.norm(x + out)


class AttentionBlocks(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([AttentionBlock(), AttentionBlock()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def _attention_blocks() -> Programs:
    return {"model": torch.export.export(AttentionBlocks().eval(), (torch.randn(2, 5, 16),))}


def _deep_encoder() -> Programs:
    """A 32-layer nn.TransformerEncoder (about 1,500 nodes): big enough to open collapsed to module groups."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 32, enable_nested_tensor=False).eval()
    return {"model": torch.export.export(model, (torch.randn(2, 5, 16),))}


@dataclass(frozen=True)
class ProgramCase:
    name: str  # file stem of the cached archive
    build: Callable[[], Programs]
    origin: str  # "exportdb" or "handmade"


HANDMADE: dict[str, Callable[[], Programs]] = {
    "topk_cond": _topk_cond,
    "cond_map": _cond_map,
    "dynamic_shapes": _dynamic_shapes,
    "unbacked": _unbacked,
    "custom_op": _custom_op,
    "batchnorm_train": _batchnorm_train,
    "batchnorm_train_decomposed": _batchnorm_train_decomposed,
    "split_chunks": _split_chunks,
    "two_programs": _two_programs,
    "tutorial_auto_dims": lambda: _tutorial_dims(Dim.AUTO),
    "tutorial_dynamic_dims": lambda: _tutorial_dims(Dim.DYNAMIC),
    "tutorial_mixed": _tutorial_mixed,
    "input_kinds": _input_kinds,
    "hf_tiny_bert": _hf_tiny_bert,
    "repeated_calls": _repeated_calls,
    "attention_blocks": _attention_blocks,
    "deep_encoder": _deep_encoder,
}


# --------------------------------------------------------------------------------------------------------------------
# ExportDB: torch's own catalogue of export cases, several of them expected to fail.


def _exportdb_cases() -> dict[str, object]:
    from torch._export.db.examples import all_examples

    return dict(sorted(all_examples().items()))


def _exportdb_builder(case_name: str) -> Callable[[], Programs]:
    def build() -> Programs:
        case = _exportdb_cases()[case_name]
        ep = torch.export.export(
            case.model,
            case.example_args,
            case.example_kwargs,
            dynamic_shapes=case.dynamic_shapes,
        )
        return {"model": ep}

    return build


def all_cases() -> dict[str, ProgramCase]:
    cases = {name: ProgramCase(name, build, "handmade") for name, build in HANDMADE.items()}
    for case_name in _exportdb_cases():
        name = f"exportdb_{case_name}"
        cases[name] = ProgramCase(name, _exportdb_builder(case_name), "exportdb")
    return cases


# --------------------------------------------------------------------------------------------------------------------
# The on-disk cache.


class ExportFailed(Exception):
    """torch could not export (or save) a case; `reason` is torch's own message, first line."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def code_names(code: types.CodeType) -> set[str]:
    """Global names a code object and the functions, lambdas and comprehensions inside it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def _reached_sources(obj: object, namespace: dict[str, object], seen: set[int]) -> list[str]:
    """The source of `obj` (a function or class) and, recursively, of every function or class defined in the same
    module (`namespace`) that its code names; the constants it closes over (an ExportDB case's name) too."""
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    try:
        # with the line it starts at: an export records its stack traces' line numbers, so a builder that moved down
        # the file (a line added above it) is a new fixture, else Details would read another line of the file
        lines, start = inspect.getsourcelines(obj)  # type: ignore[arg-type]
        out = [f"{start}:" + "".join(lines)]
    except (OSError, TypeError):
        out = [repr(obj)]
    codes: list[types.CodeType] = []
    if isinstance(obj, types.FunctionType):
        codes.append(obj.__code__)
        out += [repr(c.cell_contents) for c in obj.__closure__ or () if isinstance(c.cell_contents, (str, int))]
    elif isinstance(obj, type):
        codes += [v.__code__ for v in vars(obj).values() if isinstance(v, types.FunctionType)]
    module_name = namespace.get("__name__")
    for code in codes:
        for name in sorted(code_names(code)):
            found = namespace.get(name)
            if isinstance(found, (types.FunctionType, type)) and getattr(found, "__module__", None) == module_name:
                out += _reached_sources(found, namespace, seen)
    return out


def builder_key(build: Callable[..., object], *extra: str) -> str:
    """A short hash naming one fixture builder's version: torch's version, the builder's source and the source of
    every function and class of its module that it reaches (helpers, the nn.Modules it exports), and `extra` (say, a
    library's version). Editing one builder changes its key only; editing an unrelated one changes nothing."""
    namespace = getattr(build, "__globals__", {})
    digest = hashlib.sha256(torch.__version__.encode())
    for text in [*_reached_sources(build, namespace, set()), *extra]:
        digest.update(text.encode())
    return digest.hexdigest()[:12]


def cache_dir(build: Callable[..., object] | None = None, *extra: str) -> Path:
    """The folder for one builder's files: `.cache/test-programs/<torch>/<builder key>`. Without a builder, the
    folder of the whole of this file's version (the key of the first cache, kept for callers that want it)."""
    if build is not None:
        return CACHE_ROOT / torch.__version__ / builder_key(build, *extra)
    source_hash = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return CACHE_ROOT / torch.__version__ / source_hash


@contextmanager
def build_lock(path: Path) -> Iterator[None]:
    """An exclusive lock beside `path` while it is built, so two test runs (or `make fixtures` and a test) sharing
    the checkout do not build the same file twice at once; the second waits, then finds it built."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def cached_file(path: Path, build: Callable[[Path], None]) -> Path:
    """`path`, built first if missing by `build(tmp)` writing a temporary file that then replaces `path` atomically.
    A build that raises is cached as `STEM.failed.txt` (torch's reason, first line) beside `path` and raised as
    `ExportFailed`, then and on every later call, until the key in `path`'s folder changes."""
    failed = path.with_name(f"{path.name.removesuffix(path.suffix)}.failed.txt")
    if path.exists():
        return path
    with build_lock(path):
        if path.exists():
            return path
        if failed.exists():
            raise ExportFailed(path.stem, failed.read_text(encoding="utf-8"))
        try:
            with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as tmp_dir:
                tmp = Path(tmp_dir) / path.name
                build(tmp)
                os.replace(tmp, path)
        except Exception as error:  # torch's export errors have no common base class
            reason = _failure_reason(error)
            _write_text_atomic(failed, reason)
            _write_text_atomic(failed.with_suffix(".traceback.txt"), traceback.format_exc())
            raise ExportFailed(path.stem, reason) from error
    return path


def _write_text_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def save_programs(programs: Programs, path: Path) -> None:
    """Save one program with `torch.export.save` (what users do) or several with `package_pt2`, atomically.

    The archive's root folder is named after the file stem at save time, so we save under the final name inside a
    private temporary directory next to `path`, then move it into place.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as tmp_dir:
        tmp = Path(tmp_dir) / path.name
        if list(programs) == ["model"]:
            torch.export.save(programs["model"], tmp)
        else:
            from torch.export.pt2_archive._package import package_pt2

            package_pt2(tmp, exported_programs=programs)
        os.replace(tmp, path)


def _failure_reason(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return f"{type(error).__name__}: {first}"[:500]


def program_path(name: str, cases: dict[str, ProgramCase] | None = None) -> Path:
    """Path of the cached archive for case `name`, exporting it first if needed; `ExportFailed` if torch refuses."""
    cases = cases if cases is not None else all_cases()
    if name not in cases:
        raise KeyError(f"no test program named {name!r}; known: {', '.join(cases)}")
    build = cases[name].build
    directory = CACHE_ROOT / torch.__version__ / name / builder_key(build, inspect.getsource(save_programs))
    try:
        return cached_file(directory / f"{name}.pt2", lambda tmp: save_programs(build(), tmp))
    except ExportFailed as error:
        raise ExportFailed(name, error.reason) from None


def build_all() -> tuple[dict[str, Path], dict[str, str]]:
    """Export every case (cached): (name -> archive path, name -> failure reason)."""
    cases = all_cases()
    built: dict[str, Path] = {}
    failed: dict[str, str] = {}
    for name in cases:
        try:
            built[name] = program_path(name, cases)
        except ExportFailed as error:
            failed[name] = error.reason
    return built, failed


# --------------------------------------------------------------------------------------------------------------------
# Archive surgery, for the bad-input and fuzz tests: a real archive's members, changed and written back as a zip.


def read_members(path: Path) -> dict[str, bytes]:
    """Every member of a zip, by its full name (root folder included), in zip order."""
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def member_named(members: dict[str, bytes], suffix: str) -> str:
    """The full name of the one member ending in `suffix` (e.g. "models/model.json")."""
    found = [name for name in members if name.endswith("/" + suffix) or name == suffix]
    if len(found) != 1:
        raise KeyError(f"expected one member ending in {suffix!r}, found {found}")
    return found[0]


def write_members(path: Path, members: dict[str, bytes]) -> Path:
    """Write members as an uncompressed zip (as torch does), atomically."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    os.replace(tmp, path)
    return path


def with_member(src: Path, dst: Path, suffix: str, data: bytes | None) -> Path:
    """A copy of archive `src` at `dst` whose member ending in `suffix` holds `data` (None: member removed)."""
    members = read_members(src)
    name = member_named(members, suffix)
    if data is None:
        del members[name]
    else:
        members[name] = data
    return write_members(dst, members)


def with_model_json(src: Path, dst: Path, change: Callable[[dict], object], model: str = "model") -> Path:
    """A copy of `src` whose `models/MODEL.json` is parsed, edited in place by `change` (its return value is
    ignored, so `lambda d: d.pop("key")` works), and written back."""
    members = read_members(src)
    name = member_named(members, f"models/{model}.json")
    doc = json.loads(members[name])
    change(doc)
    members[name] = json.dumps(doc).encode()
    return write_members(dst, members)


CASE_NAMES: list[str] = list(all_cases())
HANDMADE_NAMES: list[str] = list(HANDMADE)


@pytest.fixture(scope="session")
def pt2_path() -> Callable[[str], Path]:
    """`pt2_path(name)` -> path of the cached `.pt2` for that case; skips the test, naming torch's reason, if the
    case cannot be exported by this torch."""
    cases = all_cases()

    def get(name: str) -> Path:
        try:
            return program_path(name, cases)
        except ExportFailed as error:
            pytest.skip(f"torch {torch.__version__} cannot export {name}: {error.reason}")

    return get


if __name__ == "__main__":
    built_paths, failures = build_all()
    print(f"{len(built_paths)} archives in {CACHE_ROOT / torch.__version__}")
    print(f"{len(failures)} cases torch cannot export:")
    for case, why in failures.items():
        print(f"  {case}: {why}")
