"""Reading a shell message's type and comm before the kernel dispatches it.

Used by the main-thread pump (every ipykernel) to decide when a message is
handled. Nothing here verifies a signature: the decision is only about timing,
and the kernel verifies each message when it dispatches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

CONTROL_TARGET: Final = "jupyter.widget.control"
"""ipywidgets' comm for fetching every widget's state at once (what a reload asks first)."""


@dataclass(frozen=True)
class Kind:
    """What decides when a shell message is handled."""

    msg_type: str | None
    msg_id: object = None
    """The message's id (read for ``comm_*`` messages only)."""
    comm_id: object = None
    """The comm of a ``comm_msg`` or ``comm_close``."""
    target: object = None
    """The target of a ``comm_open``."""
    method: object = None
    """The ``method`` of a ``comm_msg``'s data (ipywidgets' protocol)."""


def classify(session: Any, frames: list[Any]) -> Kind:
    """The message's :class:`Kind` (``msg_type`` None if it cannot be read)."""
    try:
        _, rest = session.feed_identities(frames, copy=False)
        header = session.unpack(_bytes(rest[1]))
        msg_type = header.get("msg_type") if isinstance(header, dict) else None
        if msg_type not in ("comm_open", "comm_msg", "comm_close"):
            return Kind(msg_type if isinstance(msg_type, str) else None)
        content = session.unpack(_bytes(rest[4]))
    except Exception:
        return Kind(None)
    if not isinstance(content, dict):
        return Kind(None)
    data = content.get("data")
    method = data.get("method") if isinstance(data, dict) else None
    return Kind(
        msg_type, header.get("msg_id"), content.get("comm_id"), content.get("target_name"), method
    )


def _bytes(frame: Any) -> bytes:
    return bytes(frame.bytes) if hasattr(frame, "bytes") else bytes(frame)
