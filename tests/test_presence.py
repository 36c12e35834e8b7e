"""Presence: pings while a question waits, and announcing again when none is answered."""

from __future__ import annotations

from mead_notebook.notebook.waiting.views import Presence


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
        every=5.0,
        within=2.0,
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


def test_an_answered_ping_announces_nothing() -> None:
    p, clock, events = presence()
    p.start()
    assert p.due() == 5.0
    clock.now += 5
    p.tick()
    assert events == ["ping 1"]
    assert p.due() == 2.0
    p.pong(1)
    clock.now += 2
    p.tick()
    assert events == ["ping 1"]
    assert p.due() == 3.0


def test_an_unanswered_ping_announces_again_and_keeps_pinging() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 5
    p.tick()
    p.pong(7)  # not this ping's number: ignored
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "announce"]
    clock.now += 5
    p.tick()
    clock.now += 2
    p.tick()
    assert events == ["ping 1", "announce", "ping 2", "announce"]
    assert p.announced == 2


def test_a_goodbye_pings_at_once_and_stop_ends_it() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 1
    p.gone()
    assert events == ["wake"]
    assert p.due() == 0.0
    p.tick()
    assert events == ["wake", "ping 1"]
    p.stop()
    clock.now += 10
    p.tick()
    assert events == ["wake", "ping 1"]


def test_an_error_in_a_ping_is_logged_not_raised() -> None:
    clock = Clock()

    def ping(seq: int) -> None:
        raise RuntimeError("comm closed")

    p = Presence(ping, lambda: None, lambda: None, every=1.0, clock=clock)
    p.start()
    clock.now += 1
    p.tick()
    assert p.due() == 2.0
