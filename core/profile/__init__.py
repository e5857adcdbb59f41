"""A `torch.profiler` Chrome trace, recorded anywhere, put on a program's nodes (issue 41, docs/profile.md).

`trace_file` reads the trace (bounded in size and nesting, plain or gzip, JSON only: nothing in it is run),
`model` holds its events as dataclasses, `attribute` joins them to the program's nodes, `summary` gives the
`profile` command's JSON and table. No Qt, no torch."""
