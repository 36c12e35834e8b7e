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
        every=8.0,
        within=2.0,
        again=4.0,
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
    for seq in (1, 2, 3):
        clock.now += 8
        p.tick()
        p.pong(seq)
    assert events == ["ping 1", "ping 2", "ping 3"]
    assert p.due() == 8.0


def test_an_unanswered_ping_announces_again_until_a_view_is_seen() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 8
    p.tick()
    p.pong(7)  # not this ping's number: ignored
    clock.now += 8
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


def test_a_goodbye_pings_at_once_and_waits_briefly() -> None:
    p, clock, events = presence()
    p.start()
    clock.now += 1
    p.gone()
    assert events == ["ping 1", "wake"]
    assert p.due() == 2.0
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

    p = Presence(ping, lambda: None, lambda: None, every=1.0, clock=clock)
    p.start()
    clock.now += 1
    p.tick()
    assert p.due() == 1.0
    p.stop()
    assert p.due() == float("inf")
