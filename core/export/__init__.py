"""Model scripts: running their export calls (the worker job), explaining failures, guards, dynamic_shapes specs, the
report."""
