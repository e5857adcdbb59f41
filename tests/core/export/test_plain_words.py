"""torch's words said in the user's (core/export/plain_words.py): the one formatter behind the Exports list, the
status bar, the Problems panel, the script's summary and the report. The messages are torch 2.13's own, as the
worker recorded them for the scripts of tests/scripts/doctor/."""
from __future__ import annotations

import re

from pt2_viewer.core.export.failures import CONSTRAINT_VIOLATION, ChainLink, classify, parse_constraint_fixes
from pt2_viewer.core.export.plain_words import headline, requirements, source_text, user_words

TORCH_WORDS = re.compile(r"\b[su]\d+\b|L\[|Eq\(|int_oo|unhinted|TORCH_LOGS")

EQUAL_DIMS = ("Constraints violated (batch_b)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
              "  - The values of batch_b = L['b'].size()[0] and batch_a = L['a'].size()[0] must always be equal.\n"
              "Suggested fixes:\n  batch_b = batch_a")
TUTORIAL = ("Constraints violated (d1, dy)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
            "  - You marked d1 as dynamic but your code specialized it to be a constant (4). If you're using "
            "mark_dynamic, either remove it or use maybe_mark_dynamic instead.\n"
            "  - The values of dy = L['y'].size()[0] and dx = L['x'].size()[0] must always be equal.\n"
            "Suggested fixes:\n  d1 = 4\n  dy = dx")


def test_sources_and_sympy_become_the_users_spelling():
    assert source_text("L['a'].size()[0]") == "a.shape[0]"
    assert user_words("Eq(s97, s52)", {"s97": "a.shape[0]", "s52": "b.shape[0]"}) == "a.shape[0] == b.shape[0]"
    assert user_words("Mod(6*L['x'].size()[0], 4) == 0") == "(6*x.shape[0]) % 4 == 0"
    said = user_words("Could not guard on data-dependent expression ((u0//2)) >= 5 (unhinted: ((u0//2)) >= 5).  "
                      "(Size-like symbols: none)", {"u0": "a"})
    assert said == "Could not guard on data-dependent expression (a//2) >= 5."
    # a symbol no name is known for becomes words, never u0
    assert user_words("Eq(u0, 1)") == "a value read from tensor data == 1"


def test_a_constraint_violation_says_what_the_model_requires():
    spec = {"dims": {"batch_a": {}, "batch_b": {}},
            "inputs": {"a": [{"dim": "batch_a"}, "static"], "b": [{"dim": "batch_b"}, "static"]}}
    changes, _ = parse_constraint_fixes(EQUAL_DIMS)
    assert requirements(changes, spec) == ["a.shape[0] == b.shape[0]"]
    failure = classify([ChainLink("torch._dynamo.exc.UserError", EQUAL_DIMS)])
    assert failure.kind == CONSTRAINT_VIOLATION
    assert headline(failure, spec) == "Export requires a.shape[0] == b.shape[0]."
    spec = {"dims": {}, "inputs": {"x": [{"dim": "dx"}, {"dim": "d1"}], "y": [{"dim": "dy"}, {"dim": "d1"}]}}
    changes, _ = parse_constraint_fixes(TUTORIAL)
    assert requirements(changes, spec) == ["x.shape[1] == 4", "y.shape[1] == 4", "x.shape[0] == y.shape[0]"]
    narrowed = parse_constraint_fixes("Suggested fixes:\n  n = Dim('n', min=3, max=64)")[0]
    assert requirements(narrowed, {"inputs": {"x": [{"dim": "n"}, "static"]}}) == ["3 <= x.shape[0] <= 64"]


def test_every_headline_is_free_of_torchs_symbols():
    messages = [
        ("torch._dynamo.exc.UserError", "Could not guard on data-dependent expression Eq(u0, 1) (unhinted: "
         "Eq(u0, 1)).  (Size-like symbols: none)"),
        ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode", "Could not extract specialized "
         "integer from data-dependent expression u0 (unhinted: u0).  (Size-like symbols: none)"),
        ("torch._dynamo.exc.UserError", EQUAL_DIMS),
        ("builtins.RuntimeError", "Expected s97 == s52 for L['x'].size()[0], but got 3"),
    ]
    for kind, text in messages:
        failure = classify([ChainLink(kind, text)])
        said = headline(failure, {"inputs": {"a": [{"dim": "batch_a"}], "b": [{"dim": "batch_b"}]}})
        assert said and not TORCH_WORDS.search(said), said
