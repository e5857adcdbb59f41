"""One entry for the `profile` command and the window's Import Profile…: a profiler trace, and where the run was
compiled what names its kernels' nodes, attributed to a program's nodes.

- With `torch_trace`, a TORCH_TRACE folder (or log) of a torch.compile run: its kernels are attributed through the
  trace's provenance (core/trace/provenance.py, core/profile/compiled.py). A TORCH_TRACE without provenance says so
  in the attribution's notes and attributes what it can: the eager ops when the profile is of the eager module, else
  nothing (every kernel's time unattributed).
- With `torch_trace` an AOTInductor package (a file), or without it a program whose own archive is a package with
  provenance: the package's `kernel_information.json` names the nodes (core/profile/package_kernels.py); a profile
  that ran none of its kernels is taken as the eager module's.
- A `.onnx` program (`archive.archive_format == "onnx"`) takes ONNX Runtime's profile (core/profile/onnx_runtime.py);
  with `onnx_model`, that profile of the `.onnx` is put on the `.pt2` it was exported from through the ONNX nodes'
  links (core/profile/onnx_source.py). ONNX Runtime's profile given for a `.pt2` alone is refused, saying what to give.
- Otherwise the trace is the eager module's (core/profile/attribute.py)."""
from __future__ import annotations

import zipfile
from pathlib import Path

from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.compiled import NO_PROVENANCE, attribute_compiled, is_generated_kernel
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import Attribution, ProfileTrace
from pt2_viewer.core.profile.onnx_runtime import attribute_onnx, is_onnx_runtime_profile
from pt2_viewer.core.profile.onnx_source import attribute_to_source
from pt2_viewer.core.profile.package_kernels import package_kernels
from pt2_viewer.core.profile.trace_file import read_trace
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.provenance import CompiledKernels, kernel_provenance
from pt2_viewer.core.trace.reader import read_trace as read_compile_trace


def profile_attribution(program: Program, trace_path: str, torch_trace: str | None = None,
                        program_label: str = "", archive: Archive | None = None,
                        onnx_model: str | None = None) -> Attribution:
    """The attribution of the trace at `trace_path` on `program` (of `archive`, when given; through the `.onnx` at
    `onnx_model` exported from it, when given); `ProfileError` (one line) when it cannot be used."""
    trace = read_trace(trace_path)
    if (archive is not None and archive.archive_format == "onnx") or onnx_model is not None:
        if torch_trace is not None:
            raise ProfileError(f"{torch_trace}: a TORCH_TRACE is for a torch.compile run's profile; ONNX Runtime's "
                               "profile of an .onnx is given alone")
        if onnx_model is None:
            return attribute_onnx(program, trace, program_label)
        return _through_onnx(program, trace, onnx_model, program_label)
    if is_onnx_runtime_profile(trace):
        raise ProfileError(f"{trace.path}: a profile ONNX Runtime wrote: give it with the .onnx it ran (pt2-viewer "
                           "profile MODEL.onnx PROFILE.json, or Import Profile… on the .onnx's tab), or add --onnx "
                           "MODEL.onnx to put it on this program through that model's links")
    if torch_trace is None:
        compiled = package_kernels(archive) if archive is not None else []
        if not compiled:
            return _eager(program, trace, program_label)
        return _package_or_eager(program, trace, compiled, archive.path if archive else "", program_label)
    if _is_package(torch_trace):
        compiled = _package(torch_trace)
        if compiled:
            return _package_or_eager(program, trace, compiled, torch_trace, program_label)
        missing = (f"{torch_trace} holds no kernel_information.json: build it with "
                   "inductor_configs={'trace.provenance_tracking_level': 1} to attribute its kernels")
    else:
        try:
            compiled = kernel_provenance(read_compile_trace(torch_trace))
        except TraceError as e:
            raise ProfileError(str(e)) from None
        if compiled:
            return attribute_compiled(program, trace, compiled, torch_trace, program_label)
        missing = f"{torch_trace} {NO_PROVENANCE}"
    try:
        result = attribute(program, trace, program_label=program_label)
    except ProfileError:
        result = attribute_compiled(program, trace, [], torch_trace, program_label)
        result.notes = [missing]
        return result
    result.notes.append(f"{missing}; the trace was attributed as the eager module's")
    return result


def _through_onnx(program: Program, trace: ProfileTrace, onnx_model: str, label: str) -> Attribution:
    try:
        onnx_archive = registry.read(onnx_model)
    except ArchiveError as e:
        raise ProfileError(str(e)) from None
    if onnx_archive.archive_format != "onnx":
        raise ProfileError(f"{onnx_model}: not an .onnx model; --onnx takes the .onnx ONNX Runtime ran")
    onnx_program = onnx_archive.program()
    result = attribute_onnx(onnx_program, trace, onnx_model)
    return attribute_to_source(program, onnx_program, result, onnx_model, label)


def _eager(program: Program, trace: ProfileTrace, label: str) -> Attribution:
    """The eager module's attribution; a profile of compiled code is refused saying what it needs."""
    try:
        return attribute(program, trace, program_label=label)
    except ProfileError:
        kernel = next((e.name for e in trace.events if is_generated_kernel(e.name)), None)
        if kernel is None:
            raise
        raise ProfileError(f"{trace.path}: a profile of compiled code (kernels such as {kernel}): give the compiled "
                           "run's TORCH_TRACE folder (profile --trace DIR, or Import Compiled Profile…) or the "
                           "AOTInductor package it ran") from None


def _package_or_eager(program: Program, trace: ProfileTrace, compiled: list[CompiledKernels], where: str,
                      label: str) -> Attribution:
    """The package's kernels; where the profile ran none of them, the eager module's ops (the package's program
    run with ep.module()), and if those do not match either, why the kernels did not."""
    try:
        return attribute_compiled(program, trace, compiled, where, label)
    except ProfileError as compiled_error:
        try:
            return attribute(program, trace, program_label=label)
        except ProfileError:
            raise compiled_error from None


def _is_package(path: str) -> bool:
    return Path(path).is_file() and zipfile.is_zipfile(path)


def _package(path: str) -> list[CompiledKernels]:
    try:
        archive = registry.read(path)
    except ArchiveError as e:
        raise ProfileError(str(e)) from None
    if archive.aoti is None:
        raise ProfileError(f"{path}: neither a TORCH_TRACE folder nor an AOTInductor package; give --trace the "
                           "compiled run's TORCH_TRACE folder, or the package it ran")
    return package_kernels(archive)
