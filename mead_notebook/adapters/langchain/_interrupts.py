"""LangGraph interrupts answered through the interaction, then resumed.

Three kinds are understood:

- LangChain's human-in-the-loop requests (``HumanInTheLoopMiddleware``, batched
  ``action_requests`` or per-call ``tool_approval``): approve/edit/reject go to
  ``request_permission`` (a call is asked once, whoever asks first; arguments the
  person edited resume as an ``edit`` decision), a tool that only allows
  ``respond`` and whose arguments offer options goes to ``ask_choice``;
- any interrupt whose value offers options (``{"prompt": ..., "options": [...]}``,
  optionally ``"multiple": true``): ``ask_choice``, resumed with the picked
  option's value, a list of them, or the person's own words (a string);
- anything else cannot be answered here: the run pauses.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.types import Interrupt

from ..base import NO_ANSWER, AgentTurn, declared_kind, question_from
from ._gate import SERVER as TOOLS
from ._gate import parameters_of

__all__ = ["answer_interrupts"]

SERVER = "langgraph"
Plan = Callable[[AgentTurn], Awaitable[Any]]


async def answer_interrupts(
    session: AgentTurn,
    interrupts: Sequence[Interrupt],
    state: Any,
    tools: Mapping[str, BaseTool] | None = None,
) -> dict[str, Any] | None:
    """The resume value of each interrupt by id, or ``None`` when the run must pause.

    ``tools`` (the graph's tools by name) give the reviewed calls' schemas.
    """
    known = tools or {}
    plans = [p for p in (_plan(i, state, known) for i in interrupts) if p is not None]
    if len(plans) != len(interrupts):
        return None
    resume: dict[str, Any] = {}
    for interrupt, plan in zip(interrupts, plans, strict=True):
        value = await plan(session)
        if value is NO_ANSWER:
            return None
        resume[interrupt.id] = value
    return resume


def _plan(interrupt: Interrupt, state: Any, tools: Mapping[str, BaseTool]) -> Plan | None:
    value = interrupt.value
    if isinstance(value, Mapping) and value.get("type") == "tool_approval":
        allowed = _allowed_in_schema(interrupt.response_schema)
        tool = tools.get(str(value.get("name", "")))
        return _review(str(value.get("tool_call_id", "")), value, allowed, tool)
    if isinstance(value, Mapping) and "action_requests" in value and "review_configs" in value:
        return _batch(value, state, tools)
    offered = question_from(interrupt.id, value)
    if offered is None:
        return None

    async def question(session: AgentTurn) -> Any:
        settled = await session.call(session.ask, offered.choice, "interrupt", SERVER, value)
        return offered.value(settled)

    return question


def _batch(request: Mapping[str, Any], state: Any, tools: Mapping[str, BaseTool]) -> Plan | None:
    actions = list(request.get("action_requests") or ())
    configs = {c.get("action_name"): c for c in request.get("review_configs") or ()}
    ids = _tool_call_ids(actions, state)
    if ids is None:
        return None
    reviews = []
    for action, tool_call_id in zip(actions, ids, strict=True):
        allowed = list((configs.get(action.get("name")) or {}).get("allowed_decisions") or ())
        reviews.append(_review(tool_call_id, action, allowed, tools.get(action.get("name", ""))))

    async def decisions(session: AgentTurn) -> Any:
        made = []
        for review in reviews:
            decision = await review(session)
            if decision is NO_ANSWER:
                return NO_ANSWER
            made.append(decision)
        return {"decisions": made}

    return decisions


def _review(
    tool_call_id: str, action: Mapping[str, Any], allowed: Sequence[str], tool: BaseTool | None
) -> Plan:
    """One reviewed tool call: a question when it can only be answered, else a permission.

    Arguments the person edited resume as an ``edit`` decision; a review that does
    not allow edits refuses the call rather than run the model's arguments.
    """
    name = str(action.get("name", ""))
    given = action.get("args")
    args: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    offered = question_from(tool_call_id, args)
    kind = declared_kind(tool.metadata if tool is not None else None)

    async def review(session: AgentTurn) -> Any:
        if "respond" in allowed and offered is not None and "approve" not in allowed:
            settled = await session.call(session.ask, offered.choice, name, TOOLS, args)
            if settled.answered or "reject" not in allowed:
                return {"type": "respond", "message": settled.text}
            return {"type": "reject", "message": settled.text}
        record, ok = await session.call(
            session.admit,
            tool_call_id,
            name,
            TOOLS,
            None,
            args,
            parameters_of(tool),
            kind=kind,
            claim=False,
        )
        edited = record.approved_arguments if ok else None
        if edited is not None and "edit" in allowed:
            return {"type": "edit", "edited_action": {"name": name, "args": dict(edited)}}
        if edited is not None:
            ok = False
            refused = f"The review of {name} does not allow edited arguments; the tool did not run."
            await session.call(session.refuse, tool_call_id, name, TOOLS, args, "denied", refused)
        if ok and "approve" in allowed:
            return {"type": "approve"}
        message = record.error or f"Permission to run {name} was denied."
        if not ok and "reject" in allowed:
            return {"type": "reject", "message": message}
        if not ok and "respond" in allowed:
            return {"type": "respond", "message": message}
        return NO_ANSWER

    return review


def _tool_call_ids(actions: Sequence[Mapping[str, Any]], state: Any) -> list[str] | None:
    """The ids of the reviewed calls: the last AI message's calls that match, in order."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    last = next((m for m in reversed(messages or ()) if isinstance(m, AIMessage)), None)
    calls = list(last.tool_calls) if last is not None else []
    ids: list[str] = []
    for action in actions:
        found = next(
            (
                c
                for c in calls
                if c["name"] == action.get("name") and c.get("args") == action.get("args")
            ),
            None,
        )
        if found is None or not found.get("id"):
            return None
        calls.remove(found)
        ids.append(str(found["id"]))
    return ids


def _allowed_in_schema(schema: object) -> list[str]:
    """The decision types a per-call review's JSON schema allows (approve and reject if unknown)."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, Mapping):
            kind = (node.get("properties") or {}).get("type")
            if isinstance(kind, Mapping):
                values = [kind.get("const"), *(kind.get("enum") or ())]
                found.extend(v for v in values if isinstance(v, str) and v not in found)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(schema)
    return found or ["approve", "reject"]
