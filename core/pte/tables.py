"""The rows the ExecuTorch panel shows (app/deploy/pte_panel.py): memory plan, delegates, constants and
segments of one method, as plain text, each row naming the graph node it leads to."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.model.executorch import ExecutorchProgram, PteMethod
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.util.words import format_bytes


@dataclass(frozen=True)
class Row:
    cells: tuple[str, ...]
    node: str = ""  # the node a click selects ("" for none)


size_text = format_bytes  # the one convention for sizes (core/util/words.py); app/deploy/aoti_tab.py imports it


def method_facts(et: ExecutorchProgram, m: PteMethod) -> list[tuple[str, str]]:
    live = m.memory.live_bytes()
    return [
        ("method", m.name),
        ("schema", f"{et.identifier}, version {et.schema_version}"),
        ("instructions", f"{m.instructions:,} ({m.chains} chain{'s' if m.chains != 1 else ''})"),
        ("values", f"{m.values:,}"),
        ("operators", f"{len(m.operators)}"),
        ("delegate calls", f"{len(m.delegates)}" + (f" ({', '.join(sorted({d.backend for d in m.delegates}))})"
                                                     if m.delegates else "")),
        ("peak planned memory", f"{size_text(m.memory.peak)} in {len(m.memory.buffers)} buffer(s)"),
        ("most live at once", f"{size_text(max(live))} (instruction {live.index(max(live))})" if m.memory.tensors
         else "no planned tensors"),
        ("file", f"{size_text(et.file_bytes)}: program {size_text(et.program_bytes)}, {len(et.segments)} segments"),
    ]


def memory_rows(m: PteMethod, program: Program) -> list[Row]:
    rows = [Row((f"buffer {i + 1}", "", "", size_text(n), "")) for i, n in enumerate(m.memory.buffers)]
    for t in m.memory.tensors:
        v = program.graph.values.get(t.value)
        end = "end" if t.last >= m.memory.instructions else str(t.last)
        rows.append(Row((t.value, str(t.buffer), f"{t.offset:,}", size_text(t.nbytes),
                         f"{'in' if t.first < 0 else t.first} – {end}",
                         v.type_text if v else ""), (v.producer or "") if v else ""))
    return rows


def delegate_rows(m: PteMethod) -> list[Row]:
    return [Row((str(d.index), d.backend, size_text(d.nbytes), d.location, ", ".join(d.ops) or "(not listed)",
                 ", ".join(f"{k}={v}" for k, v in d.compile_specs)), d.node) for d in m.delegates]


def data_rows(et: ExecutorchProgram) -> list[Row]:
    """Segments (delegate payloads, constants, named data), then each constant tensor."""
    rows = [Row((f"segment {s.index}", size_text(s.nbytes), f"at byte {s.offset:,}", s.holds)) for s in et.segments]
    rows += [Row((f"constant {c.index}", size_text(c.nbytes), "", ", ".join(c.names[:4]) +
                  (f" (+{len(c.names) - 4})" if len(c.names) > 4 else ""))) for c in et.constants]
    return rows
