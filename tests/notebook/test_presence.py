"""Presence: pings while a question waits, and announcing again when none is answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from mead_notebook.notebook.waiting import views
from mead_notebook.notebook.waiting.views import Presence, Timing

TIMING = Timing(ping_every=8.0, answer_within=2.0, announce_every=4.0, misses=3)
ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def presence() -> tuple[Presence, Clock, list[str]]:
    clock = Clock()
    events: list[str] = []
    p = Presence(
        lambda seq: events.append(f"ping {seq}"),
        lambda: events.append("announce"),
        lambda: events.append("wake"),
        timing=TIMING,
        clock=clock,
    )
    return p, clock, events


def test_nothing_happens_while_no_question_waits() -> None:
    p, clock, events = presence()
    clock.now += 60
    p.tick()
    p.gone()
    assert events == []
    assert p.due() == float("inf")


def test_a_probe_pings_at_most_every_answer_within_and_its_pong_counts() -> None:
    p, clock, events = presence()
    assert p.probe() == 2.0
    clock.now += 1.5
    assert p.probe() == pytest.approx(0.5), "not again before answer_within"
    clock.now += 0.5
    assert p.probe() == 2.0
    assert events == ["ping 1", "ping 2"]
    p.pong(2)  # a probe's seq is a ping's: its pong is heard
    p.start()
    assert p.due() == 8.0


def test_answered_pings_announce_nothing_and_wake_once_per_ping() -> None:
    p, clock, events = presence()
    p.start()
    assert p.due() == 8.0
    clock.now += 8
    for seq in (1, 2, 3):
        p.tick()
        assert p.due() == 8.0, "the pong is checked when the next ping is due"
        clock.now += 0.5
        p.pong(seq)
        assert p.due() == 7.5, "the schedule counts from the ping, not the pong"
        clock.now += 7.5
    assert events == ["ping 1", "ping 2", "ping 3"]


def test_a_view_is_gone_only_after_several_pings_in_a_row_go_unanswered() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    p.pong(7)  # not a ping that was sent: ignored
    clock.now += 8
    p.tick()  # the first is missed: the next follows sooner
    assert events == ["ping 1", "ping 2"]
    assert p.due() == 2.0
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3"]
    clock.now += 1.9
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3"]
    clock.now += 0.1
    p.tick()  # the third in a row: nobody is there
    assert events == ["ping 1", "ping 2", "ping 3", "announce"]
    assert p.due() == 4.0
    clock.now += 4
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3", "announce", "announce"]
    p.rendered()
    assert p.due() == 8.0
    clock.now += 8
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3", "announce", "announce", "ping 4"]
    assert p.announced == 2
    assert TIMING.noticed_after() == 12.0


def test_a_page_that_answers_late_or_says_anything_is_there() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    clock.now += 8
    p.tick()
    assert events == ["ping 1", "ping 2"]
    p.pong(1)  # late: still somebody
    assert p.due() == 8.0, "back to the usual pace, from the last ping"
    clock.now += 8
    p.tick()
    clock.now += 8
    p.tick()
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3", "ping 4", "ping 5"]
    p.heard()  # an answer, a cancel: anything a view sends
    clock.now += 8
    p.tick()
    clock.now += 8
    p.tick()
    clock.now += 2
    p.tick()
    assert "announce" not in events
    assert p.announced == 0


def test_a_late_pong_ends_the_announcing() -> None:
    p, clock, events = presence()
    p.start()
    for step in (8, 8, 2, 2):
        clock.now += step
        p.tick()
    assert events == ["ping 1", "ping 2", "ping 3", "announce"]
    p.pong(1)
    assert p.due() == 8.0
    clock.now += 8
    p.tick()
    assert events == ["ping 1", "ping 2", "ping 3", "announce", "ping 4"]


def test_a_goodbye_pings_at_once_and_that_ping_decides() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 1
    p.gone()
    assert events == ["ping 1", "wake"]
    assert p.due() == 2.0
    p.gone()  # a second goodbye while that ping waits sends no other
    assert events == ["ping 1", "wake", "wake"]
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "wake", "wake", "announce"]


def test_a_goodbye_while_a_ping_is_out_lets_that_ping_decide() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    clock.now += 1
    p.gone()
    assert events == ["ping 1", "wake"]
    assert p.due() == 1.0
    clock.now += 1
    p.tick()
    assert events == ["ping 1", "wake", "announce"]


def test_a_goodbye_before_a_question_waits_pings_as_soon_as_one_does() -> None:
    # The goodbye can reach the kernel before the question that its view showed waits.
    p, clock, events = presence()
    p.gone()
    assert events == []
    assert p.due() == float("inf")
    clock.now += 5
    p.start()
    assert p.due() == 0.0
    p.tick()
    assert events == ["ping 1"]
    assert p.due() == 2.0, "that ping alone decides, within answer_within"
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "announce"]


def test_a_view_heard_after_a_goodbye_keeps_the_usual_pace() -> None:
    p, _clock, events = presence()
    p.gone()
    p.rendered()
    p.start()
    assert p.due() == 8.0
    p.tick()
    assert events == []


def test_a_goodbye_from_one_of_two_views_changes_nothing() -> None:
    p, clock, events = presence()
    p.start()
    p.gone()
    p.pong(1)
    assert p.due() == 8.0
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "wake"]
    assert p.due() == 6.0


def test_stop_ends_it_and_an_error_is_logged_not_raised() -> None:
    clock = Clock()

    def ping(seq: int) -> None:
        raise RuntimeError("comm closed")

    p = Presence(ping, lambda: None, lambda: None, timing=Timing(1.0, 0.5, 1.0), clock=clock)
    p.start()
    clock.now += 1
    p.tick()
    assert p.due() == 1.0
    p.stop()
    assert p.due() == float("inf")


def test_the_kernel_wide_timing_applies_when_a_question_starts() -> None:
    old = views.set_timing(ping_every=1.5, answer_within=0.25)
    try:
        clock = Clock()
        p = Presence(lambda seq: None, lambda: None, lambda: None, clock=clock)
        views.set_timing(ping_every=3.0)
        p.start()
        assert p.due() == 3.0
        assert p.timing == Timing(3.0, 0.25, old.announce_every)
    finally:
        views.set_timing(old)
    assert views.current_timing() == old


def test_the_defaults_are_the_documented_ones() -> None:
    assert Timing() == Timing(
        views.PING_EVERY, views.ANSWER_WITHIN, views.ANNOUNCE_EVERY, views.MISSES
    )
    # docs/widget-protocol.md states them as the code does.
    text = " ".join((ROOT / "docs" / "widget-protocol.md").read_text().split())
    for words in (
        f"every {views.PING_EVERY:g} s",
        f"{views.MISSES} pings in a row",
        f"every {views.ANSWER_WITHIN:g} s",
        f"every {views.ANNOUNCE_EVERY:g} s",
    ):
        assert words in text, words


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"ping_every": 0}, ValueError),
        ({"answer_within": -1.0}, ValueError),
        ({"announce_every": float("inf")}, ValueError),
        ({"ping_every": float("nan")}, ValueError),
        ({"ping_every": 1.0, "answer_within": 1.0}, ValueError),
        ({"ping_every": "2"}, TypeError),
        ({"announce_every": True}, TypeError),
        ({"misses": 0}, ValueError),
        ({"misses": 1.5}, TypeError),
        ({"misses": True}, TypeError),
    ],
)
def test_a_bad_timing_is_refused_and_changes_nothing(
    changes: dict[str, object], error: type[Exception]
) -> None:
    before = views.current_timing()
    with pytest.raises(error):
        views.set_timing(**changes)  # type: ignore[arg-type]
    assert views.current_timing() == before
