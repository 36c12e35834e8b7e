"""Ending what a long-lived client left on its own event loop."""

from __future__ import annotations

import asyncio

__all__ = ["settle"]


async def settle(grace: float) -> None:
    """Cancel every other task of the running loop; wait up to ``grace`` seconds for them."""
    here = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not here and not t.done()]
    for task in left:
        task.cancel()
    if left:
        await asyncio.wait(left, timeout=grace)
