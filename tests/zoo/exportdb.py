"""A few ExportDB cases in the zoo table (HOPs, unbacked symbols, scalar outputs, input mutation), taken from
tests/programs.py's ExportDB catalogue so the zoo and the parity tests read the same cases."""
from __future__ import annotations

from tests.programs import _exportdb_cases
from tests.zoo.entry import Recipe, ZooEntry

CASES = ["cond_operands", "dynamic_shape_map", "constrain_as_size_example", "scalar_output", "user_input_mutation"]


def _builder(case_name: str):  # type: ignore[no-untyped-def]
    def build() -> Recipe:
        case = _exportdb_cases()[case_name]
        return Recipe(case.model, case.example_args, case.example_kwargs or {}, case.dynamic_shapes)

    build.__doc__ = f"ExportDB's {case_name}."
    return build


ENTRIES = [ZooEntry(f"exportdb_{case}", "exportdb", _builder(case)) for case in CASES]
