"""A torch.compile trace in the window: its compiles, graph breaks and recompiles (core/trace)."""
