"""The scripted ACP agent, slow to start: it answers ``initialize`` only after DELAY seconds.

Run as ``python slow_agent.py TURNS LOG DELAY [stubborn]``; ``stubborn`` ignores SIGTERM,
so that only SIGKILL ends it. It logs as the scripted agent does (``initialize`` with its
pid at once, ``prompt`` when a prompt reaches it).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any, cast

import acp

from mead_notebook.adapters.acp.scripted import _Scripted


class SlowStart(_Scripted):
    """Logs ``initialize`` at once and answers it ``delay`` seconds later."""

    def __init__(self, turns: list[list[dict[str, Any]]], log: Path, delay: float) -> None:
        super().__init__(turns, log)
        self.delay = delay

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        answer = await super().initialize(protocol_version, **kwargs)
        await asyncio.sleep(self.delay)
        return answer


def main() -> None:
    turns, log, delay = json.loads(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    if sys.argv[4:] == ["stubborn"]:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    agent = SlowStart(turns, log, delay)
    asyncio.run(acp.run_agent(cast(Any, agent), use_unstable_protocol=True))


if __name__ == "__main__":
    main()
