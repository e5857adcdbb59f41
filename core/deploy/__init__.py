"""What a program becomes past torch.export, with ExecuTorch's own tools: lowering (and why an op stayed out of the
delegate), ETRecords, and ETDump runs mapped back to the program's nodes."""
