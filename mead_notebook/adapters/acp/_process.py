"""The agent's process: started in a session of its own, its stderr kept, its tree killed."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
from collections.abc import Mapping, Sequence

import psutil

from ._inbound import Inbound

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["STDIO_LIMIT", "TERM_GRACE", "AgentProcess"]

STDIO_LIMIT = 50 * 1024 * 1024
"""Longest line the agent may send (bytes), as the SDK's own spawn allows."""
TERM_GRACE = 1.0
"""How long the agent's group gets between SIGTERM and SIGKILL (seconds)."""
TAIL_LINES = 40
"""How many of the agent's last stderr lines an error quotes."""
LINE_LIMIT = 4096
"""The longest stderr line kept (bytes; a longer one keeps its end)."""
STDERR_CHUNK = 64 * 1024


async def _gone(procs: list[psutil.Process], timeout: float) -> None:
    """Wait up to ``timeout`` s for ``procs`` to exit, on the loop itself: at the
    interpreter's exit (an atexit close) no thread can be started to wait in."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    alive = procs
    while alive and loop.time() < deadline:
        _, alive = psutil.wait_procs(alive, timeout=0)
        if alive:
            await asyncio.sleep(0.02)


class AgentProcess:
    """One running agent; :meth:`kill` ends its process group and every descendant.

    A descendant may leave the group (a command an agent starts in a session of its
    own): the tree is read before the first signal, while they are still its children.
    """

    def __init__(self, proc: asyncio.subprocess.Process, name: str) -> None:
        self.proc = proc
        self.name = name
        self.pid = proc.pid
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._killed = False
        self._reader = asyncio.ensure_future(self._read_stderr())
        assert proc.stdout is not None
        self._inbound = Inbound(proc.stdout, name, STDIO_LIMIT)

    @property
    def inbound(self) -> Inbound:
        """The reader of the agent's stdout (its hook for unreadable usage updates)."""
        return self._inbound

    @property
    def stdout(self) -> asyncio.StreamReader:
        """The agent's messages, less the malformed ``session/update`` notifications."""
        return self._inbound.reader

    @classmethod
    async def spawn(
        cls, name: str, command: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> AgentProcess:
        """Start ``command`` in ``cwd`` with ``env``, in a new session (its own process group)."""
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            limit=STDIO_LIMIT,
        )
        return cls(proc, name)

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def _read_stderr(self) -> None:
        """Keep the last lines of stderr, read in chunks (no line is too long to read).

        A stream that fails ends the reading, logged once: its error would repeat.
        """
        stream = self.proc.stderr
        if stream is None:
            return
        partial = b""
        try:
            while chunk := await stream.read(STDERR_CHUNK):
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-LINE_LIMIT:]
                for line in lines[-TAIL_LINES:]:
                    self._keep(line)
        except Exception as exc:
            log.warning("reading %s's stderr failed (%r); the rest is not kept", self.name, exc)
        if partial:
            self._keep(partial)

    def _keep(self, line: bytes) -> None:
        self._tail.append(line[-LINE_LIMIT:].decode("utf-8", "replace").rstrip("\r"))

    async def stderr_tail(self, timeout: float = 0.5) -> str:
        """The last lines the agent wrote to stderr (waiting a little for the rest)."""
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        return "\n".join(self._tail)

    async def kill(self) -> None:
        """SIGTERM the group and the tree, then SIGKILL what is left after :data:`TERM_GRACE`.

        Once only: a second call would signal a group id the system may have reused.
        """
        if self._killed:
            return
        self._killed = True
        tree = self._descendants()
        self._signal(signal.SIGTERM, tree)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), TERM_GRACE)
        await _gone(tree, TERM_GRACE)
        # The leader may be gone while its children hold the group.
        self._signal(signal.SIGKILL, tree)
        try:
            await asyncio.wait_for(self.proc.wait(), TERM_GRACE)
        except asyncio.TimeoutError:
            log.error("%s (pid %s) did not exit after SIGKILL", self.name, self.pid)
        # Its pipes end once every process holding them is gone (a launcher's child, as
        # Qwen Code's, may outlive the leader): the loop sees that before it is closed.
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        await asyncio.wait({self._reader, self._inbound.pumping}, timeout=TERM_GRACE)
        self._reader.cancel()
        self._inbound.close()

    async def close(self, timeout: float = 2.0) -> None:
        """Close stdin and let the agent exit on its own for ``timeout`` s, then :meth:`kill`."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), timeout)
        await self.kill()

    def _descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return []

    def _signal(self, sig: int, tree: list[psutil.Process]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        for proc in tree:
            # psutil checks that the pid still names the same process before signalling.
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)
