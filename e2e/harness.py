"""What the e2e tests and bench/editor.py share: a real `wiregrad serve` in a subprocess on a
free loopback port, and how to start Debian's Chromium. (Not in conftest.py: tests/server has
a conftest of its own, and a plain `import conftest` would find either.)"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

CHROMIUM = os.environ.get("WIREGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data_dir, port=None, args=()):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        exe = Path(sys.executable).with_name("wiregrad")
        self.proc = subprocess.Popen(
            [str(exe), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
            + ["--data-dir", str(data_dir), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{self.url}/api/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
                self.stop()
                raise RuntimeError(f"wiregrad serve did not start: {err}")
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
