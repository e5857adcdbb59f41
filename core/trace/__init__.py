"""Reading a torch.compile structured trace (`TORCH_TRACE=DIR`) without torch: the envelopes torch's
`trace_structured` writes, read into compiles, graph breaks, recompiles and their artifacts (docs/trace.md)."""
