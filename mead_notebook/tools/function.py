"""``@tool``: a Python function as a tool, its schema from its type hints."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable
from typing import Any, get_args, get_type_hints, overload

import pydantic

from ..calls import Call
from ..errors import ToolArgumentError, ToolDefinitionError
from ..interaction import ToolClass, ToolKind, class_of
from ..model import ToolSpec
from .base import Tool, ToolSource
from .preview import Preview, PreviewFunction, normalize

__all__ = ["FunctionTool", "as_tool", "split_tools", "tool"]


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
        kind: ToolKind | None = None,
        preview: PreviewFunction | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = (description or inspect.getdoc(fn) or "").strip()
        if kind is None:
            kind = "read" if read_only else "other"
        elif read_only and class_of(kind) != "read":
            raise ToolDefinitionError(
                f"tool {self.name!r}: read_only=True contradicts kind={kind!r}, "
                "which may change things"
            )
        self.kind: ToolKind = kind
        self.tool_class: ToolClass = class_of(kind)
        self._preview = preview
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

    def preview(self, arguments: dict[str, Any]) -> Preview | None:
        """What a call with these (validated) arguments will do, from ``preview=``."""
        if self._preview is None:
            return None
        return normalize(self._preview(**arguments))

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


def _type_hints(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    """``fn``'s resolved annotations; ``Call`` resolves even where it was imported locally."""
    local = {"Call": Call}
    try:
        return get_type_hints(fn, localns=local)
    except NameError as exc:
        for param, annotation in getattr(fn, "__annotations__", {}).items():
            if not isinstance(annotation, str):
                continue
            try:
                eval(annotation, getattr(fn, "__globals__", {}), local)
            except NameError:
                raise ToolDefinitionError(
                    f"tool {name!r}: the annotation of {param!r} ({annotation!r}) cannot be "
                    f"resolved ({exc}); import or define what it names at module level"
                ) from None
        raise ToolDefinitionError(
            f"tool {name!r}: its annotations cannot be resolved: {exc}"
        ) from None


def _signature_model(
    fn: Callable[..., Any], name: str
) -> tuple[str | None, type[pydantic.BaseModel]]:
    hints = _type_hints(fn, name)
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
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    kind: ToolKind | None = None,
    preview: PreviewFunction | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    kind: ToolKind | None = None,
    preview: PreviewFunction | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a function a tool: ``@tool``, ``@tool(read_only=True)``, ``@tool(kind="edit")``.

    ``kind`` says what a call does (``read_only=True`` is kind ``read``; the
    default is ``other``); class ``read`` only for the reading kinds. ``preview``
    is called with a call's validated arguments before permission is asked and
    returns what the call will do, for the permission card (see
    :mod:`mead_notebook.tools.preview`). A parameter annotated ``Call`` receives
    the running call's handle and is not in the schema.
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f, name=name, description=description, read_only=read_only, kind=kind, preview=preview
        )

    return wrap(fn) if fn is not None else wrap


def as_tool(item: object) -> Tool:
    """Accept a ``Tool`` as it is and a plain function as ``@tool`` would make it."""
    if isinstance(item, Tool):
        return item
    if callable(item):
        return FunctionTool(item)
    raise TypeError(f"a tool must be a Tool, a ToolSource or a function, not {item!r}")


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
