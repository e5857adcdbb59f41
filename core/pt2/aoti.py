"""What each compiled model of an AOTInductor package holds, read from its files as text (no code is loaded).

A package (`torch._inductor.aoti_compile_and_package`, or `package_pt2` with programs too) keeps, per model, under
`data/aotinductor/MODEL/`: the generated C++ wrapper (`*.wrapper.cpp`) and kernels (`*.kernel.cpp`, or Triton/CUDA
sources on GPU), their metadata JSON (device, platform, CPU ISA), the compiled library (`*.so`), sometimes the
weights apart (`*.bin`) and the compile and link flags (`*_compile_flags.json`, `*_linker_flags.json`). The
wrapper's own code names each constant it embeds (`constants_info_[i].name`, `.shape`, `.data_size`,
`.original_fqn`) and the model's inputs and outputs; those lines are read as text, and the `// Compile cmd` comment
stands in for the flags when no flags file was packaged.

Built with `trace.provenance_tracking_level` on, a model also holds `kernel_information.json` (per kernel call,
`NAME:HANDLE`, the program nodes it computes: `pre_grad_nodes`), and the wrapper marks each call with its handle
(`// [Provenance debug handles] NAME:HANDLE`); with `aot_inductor.debug_intermediate_value_printer` "1" the wrapper
saves each call's tensors (`aoti_torch_save_tensor_handle(buf2, "buf2", "after_launch", NAME)`). The wrapper's input
checks give each input's dtype and sizes (core/pt2/aoti_inputs.py).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.pt2 import archive as zipfiles
from pt2_viewer.core.pt2.aoti_inputs import AotiInput, input_checks
from pt2_viewer.core.pt2.errors import ArchiveError

MAX_SOURCE_BYTES = 64 * 1024 * 1024  # a big model's wrapper is a few MB
SOURCE_LANGUAGES = {".cpp": "cpp", ".h": "cpp", ".hpp": "cpp", ".cu": "cpp", ".py": "python", ".json": "json",
                    ".txt": "text", ".ptx": "text", ".cubin": "binary", ".so": "binary", ".o": "binary",
                    ".bin": "binary", ".spv": "binary"}
_CONSTANT = re.compile(r"constants_info_\[(\d+)\]\.(\w+)\s*=\s*(.+?);\s*$")
_IO_NAME = re.compile(r"(inputs|outputs)_info_\[(\d+)\]\.name\s*=\s*\"([^\"]*)\"")
_DTYPE = re.compile(r"cached_torch_dtype_(\w+)")
_SOURCE_NODES = re.compile(r"//\s*Topologically Sorted Source Nodes:\s*\[([^\]]*)\]"
                           r"(?:,\s*Original ATen:\s*\[([^\]]*)\])?")
_KERNEL_CALL = re.compile(r"^\s*(?:AOTI_TORCH_ERROR_CODE_CHECK\()?(?:kernels\.)?"
                          r"((?:call_)?(?:cpp|triton)_\w+|aoti_torch_\w+)\(")
_NOT_KERNELS = ("aoti_torch_empty", "aoti_torch_delete", "aoti_torch_new", "aoti_torch_save_tensor_handle",
                "aoti_torch_print_tensor_handle", "aoti_torch_get_", "aoti_torch_check", "aoti_torch_assign")
_HANDLE = re.compile(r"//\s*\[Provenance debug handles\]\s*(\S+)")
_BUFFER = re.compile(r"\b(buf\d+)(?:_handle)?\b")
_SAVED = re.compile(r'aoti_torch_save_tensor_handle\(\w+, "(\w+)", "(before|after)_launch", "([\w:]+)"\)')
KERNEL_INFO = "kernel_information.json"
_COMMANDS = ("// g++ ", "// clang++ ", "// c++ ", "// nvcc ", "// hipcc ")


@dataclass(frozen=True)
class AotiConstant:
    name: str
    fqn: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    kind: str  # Parameter, Buffer, TensorConstant ...


@dataclass(frozen=True)
class AotiFile:
    entry: str  # the archive entry, from its root
    role: str  # "wrapper", "kernel", "library", "weights", "metadata", "flags", "other"
    language: str  # "cpp", "python", "json", "text", "binary"
    nbytes: int

    @property
    def name(self) -> str:
        return PurePosixPath(self.entry).name

    @property
    def readable(self) -> bool:
        return self.language != "binary"


@dataclass(frozen=True)
class KernelCall:
    """One call in the wrapper's `run_impl`: a generated kernel or an ATen fallback, with the program's nodes it came
    from where torch wrote them (its `Topologically Sorted Source Nodes` comment) or the fused kernel's name says."""

    kernel: str
    line: int  # 1-based, in the wrapper
    source_nodes: tuple[str, ...]
    aten: tuple[str, ...]
    wrapper: str  # the wrapper's entry
    handle: str = ""  # torch's provenance key, NAME:N (when built with provenance tracking)
    writes: tuple[str, ...] = ()  # the buffers this call fills (named here first), in order
    saved: tuple[str, ...] = ()  # the tensors the wrapper saves after this call (the intermediate-value printer)
    from_provenance: bool = False  # source_nodes are torch's provenance (kernel_information.json)
    saved_before: tuple[str, ...] = ()  # the tensors it saves before this call
    saved_as: str = ""  # the kernel name in the saved files' names (an ATen fallback's is its op: at::_ops::...)
    args: tuple[str, ...] = ()  # every buffer the call names


@dataclass
class AotiModel:
    name: str
    device: str
    metadata: dict[str, str]
    constants: list[AotiConstant]
    compile_flags: list[str]
    files: list[AotiFile]
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    compile_commands: list[str] = field(default_factory=list)  # from the wrapper's `// Compile cmd` comment
    kernels: list[KernelCall] = field(default_factory=list)
    input_specs: list[AotiInput] = field(default_factory=list)  # from the wrapper's input checks
    profiled: bool = False  # its kernels record themselves in torch.profiler (cpp.enable_kernel_profile, or GPU)
    wrapper_entry: str = ""

    @property
    def saves_values(self) -> bool:
        """Built with the intermediate-value printer saving each kernel's tensors, and with torch's provenance."""
        return any(k.saved for k in self.kernels) and any(k.from_provenance for k in self.kernels)

    @property
    def sources(self) -> list[AotiFile]:
        return [f for f in self.files if f.readable and f.role in ("wrapper", "kernel", "other", "flags")]

    @property
    def constant_bytes(self) -> int:
        return sum(c.nbytes for c in self.constants)


def _role(name: str) -> str:
    if name.endswith(("_compile_flags.json", "_linker_flags.json")):
        return "flags"
    if name.endswith("_metadata.json"):
        return "metadata"
    if name.endswith((".so", ".dll", ".dylib")):
        return "library"
    if ".wrapper." in name or name.endswith("wrapper.cpp"):
        return "wrapper"
    if ".kernel." in name or name.endswith((".cu", ".ptx", ".cubin", ".spv")) or "triton" in name:
        return "kernel"
    if name.endswith((".bin", ".o")):
        return "weights" if name.endswith(".bin") else "library"
    return "other"


def aoti_models(archive: Archive) -> list[AotiModel]:
    """Every compiled model of the package, with what its text files say. Raises ArchiveError when the file
    cannot be read again."""
    if archive.aoti is None:
        return []
    files = zipfiles.open_archive(archive.path)
    try:
        return [_model(files, name) for name in archive.aoti.models]
    finally:
        files.close()


def _model(files: zipfiles.ArchiveFiles, name: str) -> AotiModel:
    prefix = f"{zipfiles.AOTI_DIR}{name}/"
    entries = [files.entries[n] for n in files.names_under(prefix)]
    listed = [AotiFile(e.name, _role(e.name), SOURCE_LANGUAGES.get(PurePosixPath(e.name).suffix, "text"), e.size)
              for e in entries]
    metadata: dict[str, str] = {}
    flags: list[str] = []
    for f in listed:
        if f.role in ("metadata", "flags"):
            try:
                data = files.read_json(f.entry, zipfiles.MAX_SMALL_BYTES)
            except ArchiveError:
                continue
            if f.role == "metadata" and isinstance(data, dict):
                metadata.update({str(k): str(v) for k, v in data.items()})
            elif isinstance(data, dict):
                flags += [f"{k}={json.dumps(v)}" for k, v in data.items()]
            elif isinstance(data, list):
                flags += [str(x) for x in data]
    constants: list[AotiConstant] = []
    inputs: list[str] = []
    outputs: list[str] = []
    commands: list[str] = []
    kernels: list[KernelCall] = []
    specs: list[AotiInput] = []
    wrapper_entry = ""
    provenance = _provenance(files, prefix)
    profiled = metadata.get("AOTI_DEVICE_KEY", "cpu") != "cpu"
    for f in listed:
        if f.role == "kernel" and f.language == "cpp" and not profiled:
            try:
                profiled = b"RecordFunctionHandle" in files.read_bytes(f.entry, MAX_SOURCE_BYTES)
            except ArchiveError:
                pass
        if f.role != "wrapper" or f.language != "cpp":
            continue
        try:
            text = files.read_bytes(f.entry, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except ArchiveError:
            continue
        constants += _constants(text)
        for kind, _i, io_name in _IO_NAME.findall(text):
            (inputs if kind == "inputs" else outputs).append(io_name)
        commands += [line[3:].strip() for line in text.splitlines() if line.startswith(_COMMANDS)]
        kernels += kernel_calls(text, f.entry, provenance)
        specs = specs or input_checks(text)
        wrapper_entry = wrapper_entry or f.entry
    if not flags:  # the flags of the compile commands, each once, in order
        flags = list(dict.fromkeys(t for c in commands for t in c.split() if t.startswith("-") and len(t) > 1))
    return AotiModel(name, metadata.get("AOTI_DEVICE_KEY", "unknown"), metadata, constants, flags, listed,
                     inputs, outputs, commands, kernels, specs, profiled, wrapper_entry)


def _provenance(files: zipfiles.ArchiveFiles, prefix: str) -> dict[str, tuple[str, ...]]:
    """torch's kernel -> program nodes (`NAME:N` -> its `pre_grad_nodes`), when the model was built with it."""
    entry = f"{prefix}{KERNEL_INFO}"
    if entry not in files.entries:
        return {}
    try:
        data = files.read_json(entry, MAX_SOURCE_BYTES)
    except ArchiveError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): tuple(str(n) for n in v.get("pre_grad_nodes") or ()) for k, v in data.items()
            if isinstance(v, dict) and isinstance(v.get("pre_grad_nodes", []), list)}


def kernel_calls(text: str, entry: str = "", provenance: dict[str, tuple[str, ...]] | None = None
                 ) -> list[KernelCall]:
    """The kernel calls of a wrapper's `run_impl`, in order, each with the program nodes torch's provenance maps it
    to (`provenance`, by its handle), else the source nodes torch recorded for it (the comment above it), else the
    ops a fused kernel's name lists (`cpp_fused_mul_relu_1`: mul, relu)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "::run_impl(" in line), None)
    if start is None:
        return []
    out: list[KernelCall] = []
    pending: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    handle, saving_as = "", ""
    before: list[str] = []
    named: set[str] = set()
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("} // AOTInductorModel::run_impl"):
            break
        m = _SOURCE_NODES.search(line)
        if m:
            pending = (tuple(x.strip() for x in m.group(1).split(",") if x.strip()),
                       tuple(x.strip() for x in (m.group(2) or "").split(",") if x.strip()))
            continue
        h = _HANDLE.search(line)
        if h:
            handle = h.group(1)
            continue
        saved = _SAVED.search(line)
        if saved:
            if saved.group(2) == "before":
                before.append(saved.group(1))
                saving_as = saved.group(3)
            elif out:
                last = out[-1]
                out[-1] = replace(last, saved=(*last.saved, saved.group(1)), saved_as=saved.group(3))
            continue
        call = _KERNEL_CALL.match(line)
        if not call or call.group(1).startswith(_NOT_KERNELS):
            continue
        name = call.group(1)
        nodes, aten = pending
        traced = provenance is not None and handle in provenance
        if traced:
            nodes = provenance[handle]  # type: ignore[index]
        elif not nodes and "_fused_" in name:
            nodes = tuple(p for p in name.split("_fused_", 1)[1].split("_") if p and not p.isdigit())
        buffers = tuple(dict.fromkeys(_BUFFER.findall(line[call.end():])))
        writes = tuple(b for b in buffers if b not in named)
        named.update(buffers)
        out.append(KernelCall(name, i + 1, nodes, aten, entry, handle, writes, (), traced, tuple(before),
                              saving_as, buffers))
        pending, handle, saving_as, before = ((), ()), "", "", []
    return out


def _constants(text: str) -> list[AotiConstant]:
    fields: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        if "constants_info_[" not in line:
            continue
        m = _CONSTANT.search(line)
        if m:
            fields.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3).strip()
    out = []
    for i in sorted(fields):
        d = fields[i]
        dtype = _DTYPE.search(d.get("dtype", ""))
        kind = re.search(r"ConstantType::(\w+)", d.get("type", ""))
        shape = tuple(int(x) for x in re.findall(r"-?\d+", d.get("shape", "")))
        size = re.search(r"\d+", d.get("data_size", ""))
        out.append(AotiConstant(d.get("name", f"constant {i}").strip('"'), d.get("original_fqn", "").strip('"'),
                                dtype.group(1) if dtype else "?", shape, int(size.group()) if size else 0,
                                kind.group(1) if kind else ""))
    return out


def read_aoti_source(archive: Archive, entry: str) -> str:
    """The text of one of the package's files (read only, never run)."""
    files = zipfiles.open_archive(archive.path)
    try:
        return files.read_bytes(entry, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
    finally:
        files.close()
