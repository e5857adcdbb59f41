"""Fixes the export doctor offers, as changes to the user's own files (core/export/doctor.py).

`source` reads the user's script with `ast` (statements, calls, assignments at a line); `symbols` maps torch's
symbols (`u0`, `s52`) back to the user's names and sub-expressions; `code_fixes` and `spec_fixes` build candidate
`Fix`es (a `torch._check`, a `torch.cond` rewrite, `strict=False`, a fake-kernel stub, an edit to the user's Dim
definitions or `dynamic_shapes` literal); `edits` turns them into unified diffs; `verify` applies a call's fixes to a
copy of the script and exports again in a fresh worker, so only fixes that work are shown.
"""
