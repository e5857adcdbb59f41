"""The layout child: `python -m pt2_viewer.core.layout [--cache-dir DIR]`, started and fed by LayoutService.

Protocol (one JSON object per line, UTF-8):
  stdin:  {"ticket": N, "requests": [LayoutRequest JSON, ...]}
  stdout: {"ticket": N, "results": [LayoutResult JSON, ...]}  or  {"ticket": N, "error": "message"}
One ticket at a time, answered in order. The protocol keeps the original stdout; file descriptor 1 is pointed at
stderr so that anything Graphviz or a library prints cannot corrupt it. Each result is also written to the disk cache
(when --cache-dir is given) here, in the child, so the GUI process spends no time encoding it. The child exits when
its stdin closes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from pt2_viewer.core.layout.cache import LayoutCache
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.layout.records import LayoutRequest, dumps


def answer(message: object, cache: LayoutCache | None) -> dict[str, object]:
    """Lay out one ticket's requests; any failure becomes an error reply naming the cause."""
    fields = message if isinstance(message, dict) else {}
    ticket = fields.get("ticket")
    try:
        if not isinstance(ticket, int) or not isinstance(fields.get("requests"), list):
            raise ValueError(f"expected {{'ticket': int, 'requests': [...]}}, got {str(message)[:200]}")
        results = []
        for obj in fields["requests"]:
            request = LayoutRequest.from_json_obj(obj)
            result = layout(request)
            if cache is not None:
                cache.put(request, result)
            results.append(result.to_json_obj())
        return {"ticket": ticket, "results": results}
    except Exception as exc:  # reported to the GUI as a LayoutError; the child keeps serving
        return {"ticket": ticket, "error": str(exc) or type(exc).__name__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pt2_viewer.core.layout", description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", help="write each finished layout into this layout cache folder")
    args = parser.parse_args(argv)
    cache = LayoutCache(args.cache_dir) if args.cache_dir else None

    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError as exc:
            message = {"ticket": None, "bad": f"not JSON: {exc}"}
        replies.write(dumps(answer(message, cache)).encode("utf-8") + b"\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
