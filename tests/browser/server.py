"""A real Jupyter server (JupyterLab or Notebook 7) for the browser tests.

Each server runs in its own process group on 127.0.0.1 with a random token and throw-away
config, data, runtime, settings, workspace and IPython folders, so nothing from the machine's
Jupyter set-up leaks in (Lab would otherwise restore old tabs). Its kernels run this
interpreter (the repository's venv, where pi_notebook is installed editable) in rich mode
(PI_NOTEBOOK_UI unset) and without any provider API key. ``stop()`` ends the whole process
group, kernels included.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

Frontend = Literal["lab", "notebook"]

#: Environment variables that must not reach the server or its kernels.
STRIPPED_ENV = ("PI_NOTEBOOK_UI", "PI_NOTEBOOK_MODEL")
START_TIMEOUT = 90.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def kernel_env() -> dict[str, str]:
    """The environment for the server and its kernels: no keys, no model override, rich UI."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in STRIPPED_ENV and not k.startswith("JUPYTER")
    }
    env["PYTHONUNBUFFERED"] = "1"
    # As in the kernel tests: a scripted run sends exactly its prompt (no notebook-context
    # entry before it); the scenarios that show the notebook context turn it on themselves.
    env["PI_NOTEBOOK_CONTEXT"] = "off"
    return env


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


@dataclass
class JupyterServer:
    frontend: Frontend
    base: Path
    """A temporary folder holding the server's root dir and all its private folders."""
    port: int = 0
    token: str = ""
    proc: subprocess.Popen[str] | None = None
    log_lines: list[str] = field(default_factory=list)
    _drain: threading.Thread | None = None

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def app_class(self) -> str:
        return "LabApp" if self.frontend == "lab" else "JupyterNotebookApp"

    def notebook_url(self, name: str, workspace: str) -> str:
        """The page that opens ``name``; in Lab inside its own ``workspace``.

        Lab restores every tab of a workspace (and starts their kernels), so each test gets a
        fresh one; Notebook 7 shows one document per page and has no workspaces in its URL.
        """
        if self.frontend == "lab":
            return f"{self.url}/lab/workspaces/{workspace}/tree/{name}?token={self.token}"
        return f"{self.url}/notebooks/{name}?token={self.token}"

    # -- set-up --------------------------------------------------------------------------------

    def _prepare_dirs(self) -> dict[str, str]:
        dirs = {
            name: self.base / name
            for name in ("config", "data", "runtime", "settings", "workspaces", "ipython")
        }
        for path in (*dirs.values(), self.root):
            path.mkdir(parents=True, exist_ok=True)
        # Kernels: ipykernel's built-in "python3" spec runs the server's interpreter, which is
        # this one (the venv where pi_notebook is installed editable); see start().
        settings = dirs["settings"] / "@jupyterlab"
        # The news toast covers the notebook; never fetch news or check for updates.
        _write_json(
            settings / "apputils-extension" / "notification.jupyterlab-settings",
            {"fetchNews": "false", "checkForUpdates": False},
        )
        return {
            "JUPYTER_CONFIG_DIR": str(dirs["config"]),
            "JUPYTER_DATA_DIR": str(dirs["data"]),
            "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
            "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
            "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
            "IPYTHONDIR": str(dirs["ipython"]),
        }

    def start(self) -> None:
        env = {**kernel_env(), **self._prepare_dirs()}
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        app = "jupyterlab" if self.frontend == "lab" else "notebook"
        argv = [
            sys.executable,
            "-m",
            app,
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.token={self.token}",
            "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.terminals_enabled=False",
            # Given once: a repeated flag silently turns it off again.
            f"--{self.app_class}.expose_app_in_browser=True",
        ]
        self.proc = subprocess.Popen(
            argv,
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        ready = threading.Event()
        assert self.proc.stdout is not None
        self._drain = threading.Thread(
            target=self._read_log, args=(self.proc.stdout, ready), daemon=True
        )
        self._drain.start()
        # The server logs its URL once it listens; the reader thread sets `ready` then (or at
        # EOF when the server dies).
        if not ready.wait(START_TIMEOUT) or self.proc.poll() is not None:
            log = "".join(self.log_lines[-40:])
            self.stop()
            raise RuntimeError(f"the {self.frontend} server did not start:\n{log}")
        self._wait_listening(time.monotonic() + START_TIMEOUT)
        # Then one API call and one page load, answered once the server is fully up, before
        # any browser comes.
        self.api("GET", "status")
        page = "lab" if self.frontend == "lab" else "tree"
        request = urllib.request.Request(
            f"{self.url}/{page}", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=START_TIMEOUT) as reply:
            reply.read()

    def _wait_listening(self, deadline: float) -> None:
        """Wait until the port accepts connections.

        Jupyter Server logs its URL *before* its event loop runs the callback that binds the
        port, and nothing is logged after binding, so this is the one place that probes: a
        connect attempt every 20 ms until it succeeds, the server exits or the deadline passes.
        """
        assert self.proc is not None
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                return
            except ConnectionRefusedError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = "".join(self.log_lines[-40:])
                    self.stop()
                    raise RuntimeError(
                        f"the {self.frontend} server never listened on {self.port}:\n{log}"
                    ) from None
                time.sleep(0.02)

    def _read_log(self, stream: IO[str], ready: threading.Event) -> None:
        pattern = re.compile(rf"http://127\.0\.0\.1:{self.port}/")
        for line in stream:
            self.log_lines.append(line)
            if not ready.is_set() and pattern.search(line):
                ready.set()
        ready.set()

    def user_settings(self, plugin: str, values: dict[str, Any] | None) -> None:
        """Write (or with ``None`` remove) the user settings of ``plugin`` ("pkg:plugin").

        The server reads them from disk whenever a page loads, so they apply to pages opened
        afterwards.
        """
        package, name = plugin.split(":")
        path = self.base / "settings" / package / f"{name}.jupyterlab-settings"
        if values is None:
            path.unlink(missing_ok=True)
        else:
            _write_json(path, values)

    # -- REST helpers ------------------------------------------------------------------------

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            f"{self.url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Delete every session and kernel (between scenarios: the machine has 2 cores)."""
        for session in self.api("GET", "sessions"):
            self.api("DELETE", f"sessions/{session['id']}")
        for kernel in self.api("GET", "kernels"):
            self.api("DELETE", f"kernels/{kernel['id']}")

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        # Kernels are in the same process group; make sure none outlives a fast server exit.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self._drain is not None:
            self._drain.join(timeout=5)

    def copy_in(self, source: Path) -> str:
        """Copy a file or folder into the root; returns its path relative to the root."""
        target = self.root / source.name
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target)
        return target.name
