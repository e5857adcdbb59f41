"""Prints to stdout and stderr, then waits for the flag file named in PT2V_TEST_FLAG before it finishes."""
import os
import sys
import time

print("first line on stdout", flush=True)
print("a line on stderr", file=sys.stderr, flush=True)
flag = os.environ["PT2V_TEST_FLAG"]
while not os.path.exists(flag):
    time.sleep(0.02)
print("saw the flag", flush=True)
