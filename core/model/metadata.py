"""Parse the string metadata torch keeps on each node: `stack_trace`, `nn_module_stack`, `torch_fn`.

All three are plain strings in the archive. Stack traces are Python traceback text; we split them into frames and
tell the user's own frames apart from torch's and other libraries' so the details panel can put the user's line first.
`nn_module_stack` is `key,fqn,class;key,fqn,class;...` from the root module inwards (an fqn may itself contain
commas only in exotic cases; we split from the outside in to stay robust).
"""
from __future__ import annotations

import re
from functools import lru_cache

import msgspec

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>.*)$')
# Paths that are not the user's own code.
_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/", "/lib/python3", "<frozen ", "<eval_with_key>", "/torch/")


class Frame(msgspec.Struct, frozen=True):
    """One frame of a node's `stack_trace`; `is_user`: the user's code, not torch's or a library's."""

    file: str
    line: int
    function: str
    code: str
    is_user: bool


class ModuleScope(msgspec.Struct, frozen=True, gc=False):
    """One entry of a node's `nn_module_stack`: a module the node was traced inside. A struct the cyclic collector
    never walks (see core/model/program.py), and so neither the tuples of a node's stack, which hold only these."""

    key: str  # torch's unique key, e.g. "L__self___layers_0"
    path: str  # the module's fully qualified name, e.g. "layers.0" ("" for the root)
    class_name: str  # e.g. "torch.nn.modules.linear.Linear"

    @property
    def short_class(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]


def is_user_file(path: str) -> bool:
    return not path.startswith("<") and not any(m in path for m in _LIBRARY_MARKERS)


def parse_stack_trace(text: str | None) -> list[Frame]:
    """Frames of a stack trace string, outermost first, as torch writes them."""
    if not text:
        return []
    frames: list[Frame] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FRAME.match(lines[i])
        if m:
            code = ""
            if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]):
                code = lines[i + 1].strip()
                i += 1
            f = m.group("file")
            frames.append(Frame(f, int(m.group("line")), m.group("func").strip(), code, is_user_file(f)))
        i += 1
    return frames


def user_frames_first(frames: list[Frame]) -> list[Frame]:
    """The user's frames (innermost first), then the rest (innermost first): what a reader wants to see."""
    inner = list(reversed(frames))
    return [f for f in inner if f.is_user] + [f for f in inner if not f.is_user]


EXPORT_ROOT = "_export_root"


@lru_cache(maxsize=65536)
def parse_module_stack(text: str | None) -> tuple[ModuleScope, ...]:
    """Scopes from the root module inwards. Cached: every node of one module shares the same string."""
    if not text:
        return ()
    scopes: list[ModuleScope] = []
    for item in text.split(";"):
        if not item:
            continue
        key, _, rest = item.partition(",")
        path, _, cls = rest.rpartition(",")
        if key.startswith("_empty_nn_module_stack"):  # torch's placeholder for "no module": not a real scope
            continue
        if path == EXPORT_ROOT or path.startswith(EXPORT_ROOT + "."):
            # strict export's name for the root module inside a HOP's body (a cond branch): the root, not a module
            # of its own (a branch's one `sin` was drawn as "_export_root: Model", its op hidden)
            path = path[len(EXPORT_ROOT) + 1:]
            if not path and scopes and scopes[-1].path == "":
                continue
        scopes.append(ModuleScope(key, path, cls))
    # torch may include the root ("L__self__", "", cls) first; keep it: it names the model class.
    return tuple(scopes)


def parse_torch_fn(text: str | None) -> tuple[str, str] | None:
    """`"linear_1;builtin_function_or_method.linear"` -> ("linear_1", "builtin_function_or_method.linear")."""
    if not text:
        return None
    name, _, fn = text.partition(";")
    return (name, fn)
