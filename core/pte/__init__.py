"""ExecuTorch `.pte` programs, read without torch or executorch: the flatbuffer, its mapping onto the program
model, and the memory plan."""
