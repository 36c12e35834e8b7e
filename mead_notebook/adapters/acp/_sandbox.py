"""Codex's Linux sandbox: bubblewrap, checked to work before Codex is started with it.

Codex runs every command in ``bwrap`` (bubblewrap) with a helper it starts
under the name ``codex-linux-sandbox``: with bubblewrap 0.9 or newer through
``--argv0``, else by that name on ``PATH``. Where bubblewrap is missing or
cannot make its namespaces, every sandboxed command fails, and Codex offers to
run it again outside the sandbox. So the preset refuses to start Codex there
unless ``sandbox="danger-full-access"`` says to run it without one, knowingly.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mead_notebook.errors import MeadError

__all__ = ["NO_SANDBOX", "PROBE_TIMEOUT", "SANDBOXED", "Sandbox", "SandboxError", "codex_sandbox"]

SANDBOXED: Final = "workspace-write"
"""Codex's sandbox mode when bubblewrap works: it writes only in the working folder."""
NO_SANDBOX: Final = "danger-full-access"
"""Codex's sandbox mode without a sandbox: its commands run as the kernel's user."""
PROBE_TIMEOUT = 5.0
"""How long bubblewrap gets to show that it works (seconds)."""
HELPER: Final = "codex-linux-sandbox"
"""The name Codex starts its own binary under, inside bubblewrap."""

_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_TRIPLES = {"x64": "x86_64", "arm64": "aarch64"}
_links: dict[str, str] = {}
"""The folder holding the helper's link, by the binary it links to (made once a process)."""


class SandboxError(MeadError, RuntimeError):
    """Codex's sandbox cannot run here (the message names the ways on)."""


@dataclass(frozen=True)
class Sandbox:
    """Codex's ``sandbox_mode`` and what its ``PATH`` needs before it for the helper."""

    mode: str
    path_first: str | None = None


def codex_sandbox(
    program: str, env: Mapping[str, str], mode: str | None = None, *, name: str = "codex"
) -> Sandbox:
    """The sandbox to start Codex (``program``, with ``env``'s ``PATH``) with.

    ``mode`` None: ``workspace-write``, once bubblewrap has shown that it works
    here; :class:`SandboxError` when it does not. ``danger-full-access`` is taken
    as said, without a check.
    """
    if mode == NO_SANDBOX:
        return Sandbox(NO_SANDBOX)
    wanted = mode or SANDBOXED
    path = env.get("PATH", os.environ.get("PATH"))
    bwrap = shutil.which("bwrap", path=path) or bundled_bwrap(program)
    if bwrap is None:
        raise SandboxError(
            _refusal(name, "bubblewrap (`bwrap`, Codex's Linux sandbox) is not on the agent's PATH")
        )
    failed = _probe(bwrap, path)
    if failed:
        raise SandboxError(_refusal(name, f"bubblewrap ({bwrap}) does not work here: {failed}"))
    if _has_argv0(bwrap) or shutil.which(HELPER, path=path) is not None:
        return Sandbox(wanted)
    binary = native_binary(program)
    if binary is None:
        raise SandboxError(
            _refusal(
                name,
                f"bubblewrap ({bwrap}) predates 0.9 (no --argv0), so Codex finds its "
                f"sandbox helper only as `{HELPER}` on PATH, and the Codex binary to "
                f"link it to was not found next to {program}",
            )
        )
    return Sandbox(wanted, _helper_folder(binary))


def _refusal(name: str, why: str) -> str:
    return (
        f"{name}: {why}, so every command Codex runs in its sandbox would fail and it would "
        "offer to run each one outside it. Either install bubblewrap (Debian, Ubuntu: "
        "`apt-get install bubblewrap`; it needs user namespaces), or pass "
        f"sandbox={NO_SANDBOX!r} to run Codex without a sandbox, knowingly."
    )


def _probe(bwrap: str, path: str | None) -> str:
    """Why ``bwrap`` cannot make the namespaces Codex asks for ("" when it can)."""
    true = shutil.which("true", path=path) or shutil.which("true") or "/bin/true"
    command = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net"]
    command += ["--ro-bind", "/", "/", "--", true]
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        return f"it could not be started ({exc})"
    try:
        _, stderr = proc.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        # Its whole group: a child left behind would hold the pipe open.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return f"it did not finish within {PROBE_TIMEOUT} s"
    if proc.returncode != 0:
        said = " ".join(stderr.split())[-300:]
        return f"it exited with code {proc.returncode}" + (f" ({said})" if said else "")
    return ""


def _has_argv0(bwrap: str) -> bool:
    try:
        shown = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--argv0" in shown.stdout + shown.stderr


def native_binary(program: str) -> str | None:
    """The Codex binary ``program`` runs: itself when it is one, else the platform
    package's next to the npm launcher it is (``@scope/codex-acp-linux-x64``), else
    the Codex that codex-acp 2.x drives (``@openai/codex-linux-x64``, in a
    ``node_modules`` above it)."""
    real = os.path.realpath(program)
    if _is_binary(real):
        return real
    arch = _ARCH.get(platform.machine().lower())
    if arch is None:
        return None
    return _launched_binary(real, arch) or _codex_binary(real, arch)


def bundled_bwrap(program: str) -> str | None:
    """The bubblewrap that ships with Codex 0.16x (``codex-resources/bwrap``, next to the
    binary), which Codex uses where none is on ``PATH``."""
    binary = native_binary(program)
    if binary is None:
        return None
    candidate = os.path.join(os.path.dirname(os.path.dirname(binary)), "codex-resources", "bwrap")
    return candidate if _is_binary(candidate) else None


def _codex_binary(real: str, arch: str) -> str | None:
    """``@openai/codex``'s native binary, in a ``node_modules`` folder above ``real``."""
    triple = f"{_TRIPLES[arch]}-unknown-linux-musl"
    package = os.path.join("@openai", f"codex-linux-{arch}")
    folder = os.path.dirname(real)
    while True:
        modules = os.path.join(folder, "node_modules")
        for where in (
            os.path.join(modules, package),
            os.path.join(modules, "@openai", "codex", "node_modules", package),
        ):
            candidate = os.path.join(where, "vendor", triple, "bin", "codex")
            if _is_binary(candidate):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _launched_binary(real: str, arch: str) -> str | None:
    """The platform package's binary next to codex-acp 0.16's npm launcher ``real``."""
    package = os.path.dirname(os.path.dirname(real))
    scope = os.path.dirname(package)
    platform_package = f"{os.path.basename(package)}-linux-{arch}"
    executable = os.path.basename(package)
    for folder in (
        os.path.join(scope, platform_package),
        os.path.join(package, "node_modules", os.path.basename(scope), platform_package),
    ):
        candidate = os.path.join(folder, "bin", executable)
        if _is_binary(candidate):
            return candidate
    return None


def _is_binary(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def _helper_folder(binary: str) -> str:
    """A private folder holding ``codex-linux-sandbox``, a link to ``binary``."""
    known = _links.get(binary)
    if known is not None and os.path.islink(os.path.join(known, HELPER)):
        return known
    folder = tempfile.mkdtemp(prefix="mead-codex-")
    os.symlink(binary, os.path.join(folder, HELPER))
    _links[binary] = folder
    return folder


@atexit.register
def _remove_links() -> None:
    for folder in _links.values():
        shutil.rmtree(folder, ignore_errors=True)
