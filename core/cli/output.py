"""How a command writes its answer: one JSON object on stdout (`--json`: a stable format for scripts), indented one
space and ended by a newline, the same from every command."""
from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


__all__ = ["print_json"]
