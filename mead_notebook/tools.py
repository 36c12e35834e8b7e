"""Tools: Python functions made callable by a model, and the hub that holds them."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, get_args, get_type_hints, overload, runtime_checkable

import pydantic

from .calls import Call
from .interaction import ToolClass
from .model import ToolSpec

__all__ = ["FunctionTool", "Tool", "ToolArgumentError", "ToolSource", "tool"]


class ToolArgumentError(ValueError):
    """The model's arguments do not match the tool's schema."""


@runtime_checkable
class Tool(Protocol):
    """A tool the router can offer and run.

    ``invoke`` runs in a thread of its own and blocks until the tool is done; it
    returns the result (a string, or anything JSON can encode) or raises.
    """

    name: str
    description: str
    server: str
    tool_class: ToolClass
    parameters: dict[str, Any]

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]: ...

    def invoke(self, arguments: dict[str, Any], call: Call) -> Any: ...


@runtime_checkable
class ToolSource(Protocol):
    """A group of tools behind a server (MCP): opened before the first turn."""

    name: str

    def open(self) -> list[Tool]: ...

    def close(self) -> None: ...


class FunctionTool:
    """A plain Python function as a tool; its schema comes from its type hints."""

    server = "local"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = (description or inspect.getdoc(fn) or "").strip()
        self.tool_class: ToolClass = "read" if read_only else "effect"
        self._call_param, self._args_model = _signature_model(fn, self.name)
        schema = self._args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        self.parameters: dict[str, Any] = schema

    def __repr__(self) -> str:
        return f"<tool {self.name} ({self.tool_class})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"arguments must be an object, not {type(arguments).__name__}")
        try:
            parsed = self._args_model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentError(problems) from None
        return {key: getattr(parsed, key) for key in type(parsed).model_fields}

    def invoke(self, arguments: dict[str, Any], call: Call) -> Any:
        kwargs = dict(arguments)
        if self._call_param:
            kwargs[self._call_param] = call
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            return asyncio.run(_await(result))
        return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _mentions_call(annotation: Any) -> bool:
    return annotation is Call or Call in get_args(annotation)


def _signature_model(
    fn: Callable[..., Any], name: str
) -> tuple[str | None, type[pydantic.BaseModel]]:
    hints = get_type_hints(fn)
    call_param: str | None = None
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        if _mentions_call(annotation):
            call_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    model = pydantic.create_model(
        f"{name}_arguments",
        __config__=pydantic.ConfigDict(extra="forbid"),
        **fields,
    )
    return call_param, model


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, read_only: bool = False
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a function a tool: ``@tool`` or ``@tool(read_only=True)``.

    Class ``read`` only when declared read-only, ``effect`` otherwise. A parameter
    annotated ``Call`` receives the running call's handle and is not in the schema.
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(f, name=name, description=description, read_only=read_only)

    return wrap(fn) if fn is not None else wrap


def as_tool(item: object) -> Tool:
    """Accept a ``Tool`` as it is and a plain function as ``@tool`` would make it."""
    if isinstance(item, Tool):
        return item
    if callable(item):
        return FunctionTool(item)
    raise TypeError(f"a tool must be a Tool, a ToolSource or a function, not {item!r}")


def result_text(value: Any) -> str:
    """The text a model receives for a tool's return value."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def spec_of(t: Tool) -> ToolSpec:
    return ToolSpec(name=t.name, description=t.description, parameters=t.parameters)


def split_tools(items: Iterable[object]) -> tuple[list[Tool], list[ToolSource]]:
    """Separate plain tools from tool sources, in the order given."""
    tools: list[Tool] = []
    sources: list[ToolSource] = []
    for item in items:
        if isinstance(item, ToolSource) and not isinstance(item, Tool):
            sources.append(item)
        else:
            tools.append(as_tool(item))
    return tools, sources
