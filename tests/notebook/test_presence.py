"""Presence: pings while a question waits, and announcing again when none is answered."""

from __future__ import annotations

import pytest

from mead_notebook.notebook.waiting import views
from mead_notebook.notebook.waiting.views import Presence, Timing

TIMING = Timing(ping_every=8.0, answer_within=2.0, announce_every=4.0)


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


def test_answered_pings_announce_nothing() -> None:
    p, clock, events = presence()
    p.start()
    assert p.due() == 8.0
    clock.now += 8
    for seq in (1, 2, 3):
        p.tick()
        assert p.due() == 2.0
        clock.now += 0.5
        p.pong(seq)
        assert p.due() == 7.5, "the schedule counts from the ping, not the pong"
        clock.now += 7.5
    assert events == ["ping 1", "ping 2", "ping 3"]


def test_a_ping_unanswered_within_its_time_announces_until_a_view_is_seen() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    p.pong(7)  # not this ping's number: ignored
    clock.now += 1.9
    p.tick()
    assert events == ["ping 1"]
    clock.now += 0.1
    p.tick()
    assert events == ["ping 1", "announce"]
    assert p.due() == 4.0
    clock.now += 4
    p.tick()
    assert events == ["ping 1", "announce", "announce"]
    p.rendered()
    assert p.due() == 8.0
    clock.now += 8
    p.tick()
    assert events == ["ping 1", "announce", "announce", "ping 2"]
    assert p.announced == 2


def test_a_late_pong_ends_the_announcing() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "announce"]
    p.pong(1)
    assert p.due() == 8.0
    clock.now += 8
    p.tick()
    assert events == ["ping 1", "announce", "ping 2"]


def test_a_goodbye_pings_at_once_and_waits_briefly() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 1
    p.gone()
    assert events == ["ping 1", "wake"]
    assert p.due() == 2.0
    p.gone()  # a second goodbye while that ping waits sends no other
    assert events == ["ping 1", "wake"]
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "wake", "announce"]


def test_a_goodbye_from_one_of_two_views_changes_nothing() -> None:
    p, clock, events = presence()
    p.start()
    p.gone()
    p.pong(1)
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
    assert p.due() == 0.5
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
    assert Timing() == Timing(views.PING_EVERY, views.ANSWER_WITHIN, views.ANNOUNCE_EVERY)


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
    ],
)
def test_a_bad_timing_is_refused_and_changes_nothing(
    changes: dict[str, object], error: type[Exception]
) -> None:
    before = views.current_timing()
    with pytest.raises(error):
        views.set_timing(**changes)  # type: ignore[arg-type]
    assert views.current_timing() == before
