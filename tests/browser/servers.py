"""A throwaway Jupyter server (JupyterLab or Notebook 7) for browser tests."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
START_TIMEOUT = 90.0
START_ATTEMPTS = 3
"""Starts of a server whose port another process took first, at most."""
STOP_TIMEOUT = 15.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def python_for_kernels() -> Path:
    """The project's venv python, which the kernels run."""
    if not VENV_PYTHON.exists():
        raise RuntimeError(f"the project's venv python is missing: {VENV_PYTHON}")
    return VENV_PYTHON


class ServerError(AssertionError):
    """A Jupyter server's REST API answered with an error (its code, its log)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class JupyterServer:
    """A Jupyter server process with its own config, data, runtime and root dirs.

    ``app`` is ``"lab"`` (JupyterLab) or ``"notebook"`` (Notebook 7). Kernels run the
    project's venv python with the repository on ``PYTHONPATH``. Real-time
    collaboration (``jupyter-collaboration``, when installed) is off unless
    ``collaborative``; ``args`` go on the server's command line after the defaults
    (``--gateway-url=...``, say).
    """

    def __init__(
        self,
        base: Path,
        app: str = "lab",
        args: Sequence[str] = (),
        *,
        collaborative: bool = False,
    ) -> None:
        self.collaborative = collaborative
        if app not in ("lab", "notebook"):
            raise ValueError(f"app must be 'lab' or 'notebook', not {app!r}")
        self.app = app
        self.args = list(args)
        self.base = base
        self.root = base / "root"
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = base / "server.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._env = self._prepare()

    def _prepare(self) -> dict[str, str]:
        dirs = {
            name: self.base / name
            for name in ("config", "data", "runtime", "ipython", "settings", "workspaces")
        }
        for path in (*dirs.values(), self.root):
            path.mkdir(parents=True, exist_ok=True)
        python = python_for_kernels()
        spec_dir = dirs["data"] / "kernels" / "python3"
        spec_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "env": {"PYTHONPATH": str(REPO)},
            "metadata": {"debugger": False},
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
        quiet = dirs["settings"] / "@jupyterlab" / "apputils-extension"
        quiet.mkdir(parents=True, exist_ok=True)
        (quiet / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("JUPYTER", "IPYTHON", "MEAD_"))
        }
        env.update(
            JUPYTER_CONFIG_DIR=str(dirs["config"]),
            JUPYTER_DATA_DIR=str(dirs["data"]),
            JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
            IPYTHONDIR=str(dirs["ipython"]),
            JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
            JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONPATH=str(REPO),
        )
        return env

    def add_python_path(self, folder: Path) -> None:
        """Let the server import modules from ``folder`` too."""
        self._env["PYTHONPATH"] = os.pathsep.join((self._env["PYTHONPATH"], str(folder)))

    ready_path = "api/status"
    """The API path that answers once the server is up."""

    def command(self) -> list[str]:
        """The server's command line."""
        module = "jupyterlab" if self.app == "lab" else "notebook"
        cmd = [
            str(python_for_kernels()),
            "-m",
            module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True",
            f"--YDocExtension.disable_rtc={not self.collaborative}",
        ]
        if self.app == "lab":
            cmd += [
                "--LabApp.news_url=",
                "--LabApp.extension_manager=readonly",
                "--LabApp.check_for_updates_class="
                "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            ]
        return cmd + self.args

    def start(self) -> JupyterServer:
        """Start the server and wait (bounded) until its API answers.

        The port was free when picked, but another process (a kernel's ZMQ socket, in a
        parallel run) can take it first: then the server cannot listen, and it is started
        again on a new port, :data:`START_ATTEMPTS` times at most."""
        for attempt in range(START_ATTEMPTS):
            if self._start_once() or attempt == START_ATTEMPTS - 1:
                return self
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}/"
            self._env = self._prepare()
        raise AssertionError("unreachable")

    def _start_once(self) -> bool:
        """Start on ``self.port``; False when that port turned out to be another's."""
        cmd = self.command()
        log = self.log_path.open("wb")
        self._proc = subprocess.Popen(
            cmd, cwd=self.root, env=self._env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                if "already in use" in self.log():
                    return False
                raise RuntimeError(f"{cmd[2]} exited with {self._proc.returncode}:\n{self.log()}")
            try:
                self.api("GET", self.ready_path)
            except http.client.HTTPException:  # not HTTP: something else has the port
                # Not stop(): its API calls would reach that other process too.
                self._proc.kill()
                self._proc.wait(timeout=STOP_TIMEOUT)
                return False
            except (OSError, urllib.error.URLError):
                time.sleep(0.25)
                continue
            return True
        self.stop()
        raise RuntimeError(f"{cmd[2]} did not answer within {START_TIMEOUT:.0f} s:\n{self.log()}")

    def log(self) -> str:
        """The server's output so far (its last 8000 characters)."""
        try:
            return self.log_path.read_text(errors="replace")[-8000:]
        except OSError:
            return ""

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the server's REST API with the token; return the decoded JSON or ``None``."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as error:
            said = error.read().decode(errors="replace")[-2000:]
            raise ServerError(
                error.code,
                f"{method} {path}: HTTP {error.code} {said}\nthe server's log:\n{self.log()}",
            ) from error
        return json.loads(raw) if raw else None

    def kernels(self, within: float = 10.0) -> list[dict[str, Any]]:
        """The running kernels. Jupyter Server answers 500 for a moment while a kernel
        starts (it lists the kernel before it has set its ``last_activity``): asked
        again until ``within`` seconds have passed."""
        deadline = time.monotonic() + within
        while True:
            try:
                return list(self.api("GET", "api/kernels") or [])
            except ServerError as error:
                if error.code != 500 or time.monotonic() > deadline:
                    raise
            time.sleep(0.2)

    def page_url(self, notebook: str) -> str:
        """The address that opens ``notebook`` in this server's app, with the token."""
        if self.app == "lab":
            return f"{self.url}lab/tree/{notebook}?reset&token={self.token}"
        return f"{self.url}notebooks/{notebook}?token={self.token}"

    def shutdown_kernels(self) -> None:
        """Stop every running kernel (between tests)."""
        for kernel in self.kernels():
            with contextlib.suppress(OSError, urllib.error.URLError):
                self.api("DELETE", f"api/kernels/{kernel['id']}", timeout=20.0)

    def set_lab_setting(self, plugin: str, values: dict[str, Any]) -> None:
        """Write a JupyterLab user setting through the settings API."""
        self.api("PUT", f"lab/api/settings/{plugin}", {"raw": json.dumps(values)})

    def stop(self) -> None:
        """Stop the server and its kernels; kill it if it does not end in time."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(OSError, urllib.error.URLError):
            self.shutdown_kernels()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)
