"""What the e2e tests and bench/editor.py share: a real `wiregrad serve` in a subprocess on a
free loopback port, and how to start Debian's Chromium. (Not in conftest.py: tests/server has
a conftest of its own, and a plain `import conftest` would find either.)"""

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]

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
        stop_process(self.proc)


def stop_process(proc):
    """Ask a server process to stop, and make it stop after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_until_up(proc, url, what, log, seconds=90):
    """Wait for `url` to answer 200 from the server `proc` starts; stop it and raise with the
    end of its `log` if it exits or `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if requests.get(url, timeout=2).ok:
                return
        except requests.ConnectionError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc)
            raise RuntimeError(f"{what} did not start: {log.read_text()[-2000:]}")
        time.sleep(0.3)


class Jupyter:
    """A real Jupyter front end from PyPI, `app` "jupyterlab" (JupyterLab) or "notebook"
    (Notebook 7, built of JupyterLab's components), on a free loopback port with a token, its
    settings and runtime files in `root`, its kernels this Python with this checkout
    importable, and Wiregrad's data directory in `root` too. `url(notebook)` opens a notebook
    in `root`."""

    # each app's own flags (JupyterLab's news and update check would ask the network) and
    # where it opens a notebook
    APPS = {
        "jupyterlab": (
            [
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ],
            "lab/tree",
        ),
        "notebook": ([], "notebooks"),
    }

    def __init__(self, root, app="jupyterlab"):
        root = Path(root)
        flags, self.tree = self.APPS[app]
        self.port, self.token = free_port(), os.urandom(16).hex()
        self.log = root / "jupyter.log"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
            "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(root / ".lab-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(root / ".lab-workspaces"),
            "WIREGRAD_DATA": str(root / "wiregrad-data"),
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                app,
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.allow_root=True",  # (CI containers run as root)
                *flags,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),  # a file: a pipe nobody reads would fill and stall it
        )
        base = f"http://127.0.0.1:{self.port}"
        wait_until_up(self.proc, f"{base}/api/status?token={self.token}", app, self.log)
        self.base = base

    def url(self, notebook):
        return f"{self.base}/{self.tree}/{notebook}?token={self.token}"

    def stop(self):
        stop_process(self.proc)


class Marimo:
    """A real marimo (from PyPI) serving `notebook` (a marimo .py file) as an app (`marimo
    run`: its cells run when a page opens, read-only) on a free loopback port, headless, no
    token (marimo's default for `run`; it listens on 127.0.0.1 only). Its kernel is this
    Python with this checkout importable, Wiregrad's data directory in the notebook's folder."""

    def __init__(self, notebook):
        notebook = Path(notebook)
        root = notebook.parent
        self.port = free_port()
        self.log = root / "marimo.log"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "WIREGRAD_DATA": str(root / "wiregrad-data"),
            "HOME": str(root),  # (marimo's config and caches, not the user's)
            "XDG_CONFIG_HOME": str(root / ".config"),
            "XDG_CACHE_HOME": str(root / ".cache"),
            "XDG_STATE_HOME": str(root / ".state"),
        }
        exe = Path(sys.executable).with_name("marimo")
        self.proc = subprocess.Popen(
            [str(exe), "run", "--headless", "--no-token", "--no-sandbox"]
            + ["--host", "127.0.0.1", "--port", str(self.port), str(notebook)],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),  # a file: a pipe nobody reads would fill and stall it
        )
        self.url = f"http://127.0.0.1:{self.port}/"
        wait_until_up(self.proc, f"{self.url}health", "marimo", self.log)

    def stop(self):
        stop_process(self.proc)


def notebook_file(path, sources):
    """A notebook of code cells with `sources`, for the python3 kernel."""
    cells = [
        {
            "id": f"c{i}",
            "cell_type": "code",
            "metadata": {},
            "source": src,
            "outputs": [],
            "execution_count": None,
        }
        for i, src in enumerate(sources)
    ]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb = {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}
    Path(path).write_text(json.dumps(nb))


def run_cell(page, index):
    """Run notebook cell `index` as a person does: click into it, Shift+Enter."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    return cell


def run_first_cell(page, tries=6):
    """Run cell 0 until the kernel has run it, as a person presses Shift+Enter again when
    nothing happens: a run sent before the page's connection to the kernel is up is dropped,
    and then the prompt stays empty ("[ ]:", not "[*]:"), even after the kernel reads idle
    (seen in a fresh clone's Notebook 7). Cell 0 must be safe to run twice."""
    from playwright.sync_api import expect

    cell = page.locator(".jp-Notebook .jp-Cell").nth(0)
    prompt = cell.locator(".jp-InputPrompt")
    counted = re.compile(r"\[\d+\]:")
    for _ in range(tries):
        run_cell(page, 0)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = prompt.inner_text()
            if counted.search(text):
                return cell
            if "*" in text:  # sent and running: it will count
                expect(prompt).to_have_text(counted, timeout=60_000)
                return cell
            time.sleep(0.2)
    raise AssertionError(f"the kernel never ran the first cell in {tries} tries")
