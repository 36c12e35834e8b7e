from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mead_notebook import Allow, Deny, Interaction, Picked, Router, ScriptedModel, Unanswered
from mead_notebook.interaction import resolve, valid
from mead_notebook.policies import AllowAll, DenyAll


class Complete:
    def tool_updated(self, context: Any, update: Any) -> None: ...
    def request_permission(self, context: Any, request: Any) -> Allow:
        return Allow()

    def register_call(self, context: Any, tool_call_id: str, call: Any) -> None: ...
    def ask_choice(self, context: Any, choice: Any) -> Unanswered:
        return Unanswered()

    def text_delta(self, context: Any, text: str) -> None: ...


class Partial:
    def tool_updated(self, context: Any, update: Any) -> None: ...


class NotCallable(Complete):
    text_delta = "nope"  # type: ignore[assignment]


def test_results_are_frozen_and_comparable() -> None:
    assert Allow() == Allow()
    assert Deny("expired") == Deny("expired")
    assert Deny("expired") != Deny("rejected")
    assert Picked("a") == Picked("a") != Picked("b")
    assert Unanswered("expired") != Unanswered("no_answer")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Deny().reason = "expired"  # type: ignore[misc]
    assert hash(Picked("a")) == hash(Picked("a"))


def test_results_work_with_match() -> None:
    def describe(value: object) -> str:
        match value:
            case Allow():
                return "allow"
            case Deny(reason):
                return f"deny:{reason}"
            case Picked(option_id):
                return f"picked:{option_id}"
            case Unanswered(reason):
                return f"unanswered:{reason}"
        return "other"

    assert describe(Allow()) == "allow"
    assert describe(Deny("expired")) == "deny:expired"
    assert describe(Picked("x")) == "picked:x"
    assert describe(Unanswered("no_answer")) == "unanswered:no_answer"


def test_protocol_is_runtime_checkable() -> None:
    assert isinstance(Complete(), Interaction)
    assert isinstance(AllowAll(), Interaction)
    assert not isinstance(Partial(), Interaction)


def test_resolve_takes_a_bare_interaction_or_a_complete_pair() -> None:
    complete, deny = Complete(), DenyAll()
    assert resolve((complete, None)) == (complete, None)
    assert resolve((deny, {"user": "ann"})) == (deny, {"user": "ann"})
    assert resolve(complete) == (complete, None)
    assert resolve(None) is None
    for bad in [
        (Partial(), None),
        (NotCallable(), None),
        (Complete(), None, None),
        [Complete(), None],
    ]:
        with pytest.raises(TypeError):
            resolve(bad)


@pytest.mark.parametrize("bad", [Partial(), (Partial(), None), 42, "AllowAll", (None, None)])
def test_a_turn_refuses_anything_but_an_interaction_before_it_starts(bad: object) -> None:
    model = ScriptedModel([["never streamed"]])
    router = Router(model)
    with pytest.raises(TypeError, match="interaction"):
        router.run("hi", interaction=bad)
    assert model.remaining == 1


@pytest.mark.parametrize("given", [AllowAll, (AllowAll, None)], ids=["bare", "pair"])
def test_a_class_for_an_interaction_says_to_pass_an_instance(given: object) -> None:
    model = ScriptedModel([["never streamed"]])
    with pytest.raises(TypeError, match=r"pass an instance: `AllowAll\(\)`"):
        Router(model).run("hi", interaction=given)
    assert model.remaining == 1
    assert not valid((AllowAll, None))
    assert valid((AllowAll(), None))


def test_a_pair_passes_its_context_to_every_callback() -> None:
    seen: list[object] = []

    class Spy(Complete):
        def text_delta(self, context: Any, text: str) -> None:
            seen.append(context)

    context = object()
    Router(ScriptedModel([["a", "b"]])).run("hi", interaction=(Spy(), context))
    assert seen == [context, context]
    seen.clear()
    Router(ScriptedModel([["a"]])).run("hi", interaction=Spy())
    assert seen == [None]
