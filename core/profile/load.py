"""One entry for the `profile` command and the window's Import Profile…: a profiler trace, and where the run was
compiled its TORCH_TRACE folder, attributed to a program's nodes.

Without a TORCH_TRACE the trace is taken as the eager module's (core/profile/attribute.py). With one, its kernels
are attributed through the trace's provenance (core/profile/compiled.py); a TORCH_TRACE without provenance says so in
the attribution's notes and attributes what it can: the eager ops, when the profile is of the eager module, else
nothing (every kernel's time unattributed)."""
from __future__ import annotations

from pt2_viewer.core.model.program import Program
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.compiled import NO_PROVENANCE, attribute_compiled
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import Attribution
from pt2_viewer.core.profile.trace_file import read_trace
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.provenance import kernel_provenance
from pt2_viewer.core.trace.reader import read_trace as read_compile_trace


def profile_attribution(program: Program, trace_path: str, torch_trace: str | None = None,
                        program_label: str = "") -> Attribution:
    """The attribution of the trace at `trace_path` on `program`; `ProfileError` (one line) when it cannot be used."""
    trace = read_trace(trace_path)
    if torch_trace is None:
        return attribute(program, trace, program_label=program_label)
    try:
        compiled = kernel_provenance(read_compile_trace(torch_trace))
    except TraceError as e:
        raise ProfileError(str(e)) from None
    if not compiled:
        try:
            result = attribute(program, trace, program_label=program_label)
        except ProfileError:
            return attribute_compiled(program, trace, compiled, torch_trace, program_label)
        result.notes.append(f"{torch_trace} {NO_PROVENANCE}; the trace was attributed as the eager module's")
        return result
    return attribute_compiled(program, trace, compiled, torch_trace, program_label)
