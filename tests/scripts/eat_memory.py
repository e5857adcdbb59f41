"""Allocates memory until it fails: under the worker's memory limit this raises MemoryError at the append line."""
print("eating memory", flush=True)
hoard = []
while True:
    hoard.append(bytearray(64 * 1024 * 1024))
