"""JupyterLab's connection to a kernel gateway, opened for a page's websocket only once it is used.

Jupyter Server 2.21 opens the gateway connection the moment it answers a page's kernel
websocket. It answers the page's first socket without the kernel protocol the page
asked for (a gateway speaks the legacy one), so the browser drops that socket and
connects again without one; the gateway connection made for the dropped socket is
never closed. That orphan carries the page's session id: when it reaches the gateway
after the page's own connection, the gateway takes the page's for the stale one (it
closes it, or the kernel answers the orphan instead), and the page never hears from
its kernel. This connection waits for the page's first message before it connects: a
socket the browser dropped sends none.

The browser tests run JupyterLab's server with it
(``--ServerApp.kernel_websocket_connection_class``); a person can too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_server.gateway.connections import GatewayWebSocketConnection

__all__ = ["UsedGatewayConnection"]


class UsedGatewayConnection(GatewayWebSocketConnection):  # type: ignore[misc]
    """Connects to the gateway on the page's first message when the page was answered without
    the protocol it asked for; at once otherwise."""

    _waiting: list[str] | None = None
    _connecting: asyncio.Future[Any] | None = None

    async def connect(self) -> None:
        handler = self.websocket_handler
        offered = handler.request.headers.get("Sec-WebSocket-Protocol")
        if offered and handler.selected_subprotocol is None:
            self._waiting = []
            return
        await super().connect()

    def handle_incoming_message(self, message: str) -> None:
        if self._waiting is None:
            super().handle_incoming_message(message)
            return
        self._waiting.append(message)
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(super().connect())
            self._connecting.add_done_callback(self._send_waiting)

    def _send_waiting(self, _: object) -> None:
        waiting, self._waiting = self._waiting or [], None
        for message in waiting:
            super().handle_incoming_message(message)
