"""Never finishes, and starts a child process that would also run forever: cancel and timeout must end both."""
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
print(f"child pid {child.pid}", flush=True)
while True:
    time.sleep(0.05)
