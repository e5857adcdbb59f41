"""The table of dataclasses' compiled methods (core/util/dataclass_code.py): a class made through it is the class
`@dataclass` makes; a later launch compiles nothing it has seen; a damaged table is read as none; no table is written
where Python writes no bytecode. Launches are real processes with their bytecode under a folder of the test's own
(PYTHONPYCACHEPREFIX), as an installed viewer keeps its `.pyc` files."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pt2_viewer.core.util import dataclass_code

# A launch: the views' dataclasses (the window's model, scene and layout records) made through the table, then the
# number of texts it had to compile and a frozen class's behaviour.
LAUNCH = textwrap.dedent("""
    import dataclasses, json
    from pt2_viewer.core.util import dataclass_code as D
    D.install()
    import pt2_viewer.core.graph.document, pt2_viewer.core.layout.records
    from pt2_viewer.core.model.program import Edge
    e = Edge("a", "b", "v")
    try:
        e.src = "x"
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    used, compiled = D.counts()
    print(json.dumps({"compiled": compiled, "used": used, "repr": repr(e), "frozen": frozen,
                      "equal": e == Edge("a", "b", "v")}))
""")


def launch(prefix: Path, write_bytecode: bool = True) -> dict[str, object]:
    import json

    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run([sys.executable, "-c", LAUNCH], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def tables(prefix: Path) -> list[Path]:
    return sorted(prefix.rglob("dataclass_methods.*.marshal"))


def test_a_second_launch_compiles_nothing_and_its_classes_behave_the_same(tmp_path: Path) -> None:
    first = launch(tmp_path)
    assert first["compiled"] == first["used"] and int(first["used"]) > 40  # type: ignore[arg-type]
    assert len(tables(tmp_path)) == 1
    second = launch(tmp_path)
    assert second["compiled"] == 0 and second["used"] == first["used"]
    assert second["repr"] == first["repr"] == "Edge(src='a', dst='b', value='v')"
    assert second["frozen"] is first["frozen"] is True and second["equal"] is True


def test_a_damaged_table_is_none_and_is_written_again(tmp_path: Path) -> None:
    launch(tmp_path)
    (table,) = tables(tmp_path)
    table.write_bytes(b"\x00not marshal" * 10)
    again = launch(tmp_path)
    assert again["compiled"] == again["used"] and again["repr"] == "Edge(src='a', dst='b', value='v')"
    assert launch(tmp_path)["compiled"] == 0  # written whole again


def test_no_table_where_no_bytecode_is_written(tmp_path: Path) -> None:
    result = launch(tmp_path, write_bytecode=False)
    assert result["compiled"] == result["used"] and not tables(tmp_path)


def test_methods_from_the_table_are_those_exec_compiles() -> None:
    """Same code, same annotations (a table compiled with this module's `from __future__ import annotations` would
    have made them strings), same behaviour, whether a text is compiled now or found in the table."""

    def make() -> type:
        @dataclasses.dataclass(frozen=True)
        class Point:
            """A test class."""

            x: int
            y: list[int] = dataclasses.field(default_factory=list)

        return Point

    saved = vars(dataclasses).pop("exec", None)
    try:
        plain = make()
        dataclass_code.install()
        compiled, found = make(), make()  # the first compiles its texts into the table, the second finds them there
    finally:
        if saved is None:
            vars(dataclasses).pop("exec", None)
        else:
            vars(dataclasses)["exec"] = saved
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__"):
        code = getattr(plain, name).__code__
        assert getattr(compiled, name).__code__.co_code == code.co_code
        assert getattr(found, name).__code__.co_code == code.co_code
    assert found.__init__.__annotations__ == plain.__init__.__annotations__
    assert repr(found(1, [2])) == repr(plain(1, [2])) and repr(plain(1, [2])).endswith("Point(x=1, y=[2])")
    assert found(1) == found(1) != found(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found(1).x = 2  # type: ignore[misc]
