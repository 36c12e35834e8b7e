"""The ``create_agent`` middleware for agents you invoke yourself."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime

from ..base import AgentTurn, active_turn, required
from ._gate import AsyncExecute, Execute, Result, ToolGate

__all__ = ["MeadMiddleware"]


class MeadMiddleware(AgentMiddleware[Any, Any, Any]):
    """Asks ``interaction`` around every tool call of the agent's runs (one turn per run).

    Put it first in ``create_agent(middleware=[...])`` to ask before any other
    middleware sees a call. With ``invoke``/``stream`` nothing can stop a running
    call (its card says so); with ``ainvoke``/``astream`` the card's Cancel
    cancels the call's task. Text reaches ``text_delta`` once per model reply.
    Interrupts and resuming stay yours; ``run``/``arun``/``start`` of
    :mod:`mead_notebook.adapters.langchain` answer them through the interaction.
    Under those, this middleware steps aside (they ask themselves).
    """

    def __init__(self, interaction: object) -> None:
        self.interaction = required(interaction)
        self.tools = []
        self.gate = ToolGate(self._active)
        self._session: AgentTurn | None = None
        self._lock = threading.Lock()

    def _active(self) -> AgentTurn | None:
        return None if active_turn.get() is not None else self._session

    # -- the turn ---------------------------------------------------------------------

    def _open(self, state: Any) -> AgentTurn | None:
        """End the turn left open by an earlier run, if any, and make a new one."""
        if active_turn.get() is not None:
            return None
        with self._lock:
            previous, self._session = self._session, AgentTurn(self.interaction)
            session = self._session
        if previous is not None:
            previous.call_now(previous.driver.end, None)
            previous.close()
        return session

    def _close(self) -> AgentTurn | None:
        """Forget the turn in progress and return it, to end it."""
        with self._lock:
            session, self._session = self._session, None
        return session

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._open(state)
        if session is not None:
            session.call_now(session.driver.start, _prompt(state))
        return None

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._open(state)
        if session is not None:
            await session.call(session.driver.start, _prompt(state))
        return None

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._close()
        if session is not None:
            session.finish(None)
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._close()
        if session is not None:
            try:
                await session.call(session.driver.end, None)
            finally:
                session.close()
        return None

    # -- text and errors ----------------------------------------------------------------

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._active()
        text = _reply_text(state)
        if session is not None:
            session.text(text)
        return None

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        try:
            return handler(request)
        except BaseException as exc:
            session = self._close() if self._active() is not None else None
            if session is not None:
                session.finish(exc)
            raise

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        try:
            return await handler(request)
        except BaseException as exc:
            session = self._close() if self._active() is not None else None
            if session is not None:
                try:
                    await session.call(session.driver.end, exc)
                finally:
                    session.close()
            raise

    # -- tool calls ---------------------------------------------------------------------

    def wrap_tool_call(self, request: ToolCallRequest, handler: Execute) -> Result:
        return self.gate.wrap(request, handler)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: AsyncExecute) -> Result:
        try:
            return await self.gate.awrap(request, handler)
        except asyncio.CancelledError as exc:
            session = self._close() if self._active() is not None else None
            if session is not None:
                session.cancel()
                session.post(session.driver.end, exc)
                session.close()
            raise


def _prompt(state: Any) -> str:
    messages = state.get("messages") if isinstance(state, dict) else None
    last = next((m for m in reversed(messages or ()) if isinstance(m, HumanMessage)), None)
    return str(last.text) if last is not None else ""


def _reply_text(state: Any) -> str:
    messages = state.get("messages") if isinstance(state, dict) else None
    last = messages[-1] if messages else None
    return str(last.text) if isinstance(last, AIMessage) else ""
