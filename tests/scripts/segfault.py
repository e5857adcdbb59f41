"""Crashes the worker with a segmentation fault after printing a line (ctypes reads address 0)."""
import ctypes

print("about to crash", flush=True)
ctypes.string_at(0)
