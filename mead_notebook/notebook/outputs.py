"""The widget's outputs in the notebook: its live view, and the static transcript of its turn.

JupyterLab draws a widget output only while the widget's model exists: after the
kernel is gone it shows "Error displaying widget: model not found" and never
falls back to another MIME type. So when a turn ends, the widget publishes its
transcript as an output of its own (text/html and text/plain), in the cell that
shows the widget, and brings the widget output's text/plain to the final
summary. The live view of the widget carries the class ``mead-key-<key>``, by
which the transcript's style rule hides the transcript while the view is alive
(``static.py``). nbconvert, nbclient and papermill save and render both outputs;
nbconvert skips the widget output when the notebook holds no widget state.

A turn that ends after its cell has finished and another cell has run (a turn
started with ``router.start``) cannot add an output to its cell: its transcript
then rides on the widget output itself (text/html beside the widget view), which
nbconvert renders but JupyterLab, preferring the widget view, does not.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from .static import to_html
from .transcript import TurnState, to_text

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Outputs", "current_request"]

WIDGET_VIEW: Final = "application/vnd.jupyter.widget-view+json"
SAY_AFTER: Final = 0.25
"""How long a question waits before the cell says so where the widget cannot be drawn (s)."""

_keys = itertools.count(1)
_keys_lock = threading.Lock()

Bundle = dict[str, Any]


def next_key() -> int:
    """A number for the next widget, unique in this kernel session, the same in every run."""
    with _keys_lock:
        return next(_keys)


def current_request() -> str | None:
    """The id of the request the kernel's display messages go to now (the running cell), if any."""
    try:
        from IPython.core.interactiveshell import InteractiveShell

        if not InteractiveShell.initialized():
            return None
        header = getattr(InteractiveShell.instance().display_pub, "parent_header", None)
    except Exception:
        return None
    msg_id = header.get("msg_id") if isinstance(header, dict) else None
    return msg_id if isinstance(msg_id, str) and msg_id else None


def _display(data: Bundle, display_id: str | bool, update: bool = False) -> str | None:
    from IPython.display import display, update_display

    if update:
        update_display(data, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
        return None
    handle = display(data, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
    found = getattr(handle, "display_id", None)
    return found if isinstance(found, str) else None


class Outputs:
    """Where one widget is shown, and what it publishes when a turn ends."""

    def __init__(self) -> None:
        self.key = next_key()
        self._request = current_request
        self._publish = _display
        self._lock = threading.Lock()
        self.widget_display_id: str | None = None
        self.transcript_display_id: str | None = None
        self.shown_in: str | None = None
        self._waiting_lock = threading.Lock()
        self._waiting_later: Bundle | None = None
        self._waiting_since = 0.0

    @property
    def css_class(self) -> str:
        """The class the widget's views carry, which the transcript's style rule looks for."""
        return f"mead-key-{self.key}"

    def displayed(self) -> None:
        """Note that the widget is being displayed, in the request that runs now."""
        with self._lock:
            self.shown_in = self._request()

    def show(self, widget_bundle: Bundle) -> None:
        """Display the widget with a display id, so its summary can be brought up to date."""
        self.displayed()
        display_id = self._publish(widget_bundle, True, False)
        with self._lock:
            self.widget_display_id = display_id

    def refresh(self, widget_bundle: Bundle) -> None:
        """Publish the widget's output again in place (a view that lost it draws it anew)."""
        with self._lock:
            widget_id = self.widget_display_id
        if widget_id is not None:
            self._publish(widget_bundle, widget_id, True)

    def waiting(self, bundle: Bundle, *, nothing: bool) -> None:
        """Keep what waits for a person (``fallback.py``; ``nothing``: that nothing waits)
        for :meth:`flush_waiting`, replacing what was kept; never raises.

        It is published where a page without the widget sees it (the transcript's
        output, added to the widget's cell while that cell runs) once a question has
        waited :data:`SAY_AFTER` seconds, or at the turn's next step: so a question
        answered at once publishes nothing, and no publishing stands between an answer
        and the allowed tool. That nothing waits is kept only once something was said.
        The widget output itself is not updated: JupyterLab would draw a new view of the
        widget for each update, losing what the person was typing in the old one.
        """
        with self._waiting_lock:
            if nothing and self.transcript_display_id is None:
                self._waiting_later = None
                return
            if self._waiting_later is None:
                self._waiting_since = time.monotonic()
            self._waiting_later = bundle

    def waiting_due(self) -> float | None:
        """Seconds until what :meth:`waiting` kept is due (None: nothing is kept)."""
        with self._waiting_lock:
            if self._waiting_later is None:
                return None
            return max(0.0, self._waiting_since + SAY_AFTER - time.monotonic())

    def flush_waiting(self) -> None:
        """Publish what :meth:`waiting` kept, if anything; never raises."""
        if self._waiting_later is None:
            return
        with self._waiting_lock:
            bundle, self._waiting_later = self._waiting_later, None
            if bundle is not None:
                self._publish_waiting(bundle)

    def _publish_waiting(self, bundle: Bundle) -> None:
        try:
            with self._lock:
                transcript_id, shown_in = self.transcript_display_id, self.shown_in
            if transcript_id is not None:
                self._publish(bundle, transcript_id, True)
                return
            if shown_in is not None and shown_in == self._request():
                found = self._publish(bundle, True, False)
                with self._lock:
                    self.transcript_display_id = found
        except Exception:
            log.exception("what waits could not be published")

    def turn_ended(self, widget: Callable[[], Bundle], state: Callable[[], TurnState]) -> None:
        """Publish the widget's final summary and the static transcript; never raises.

        ``widget`` and ``state`` give the widget output's data and the turn's state;
        outside a kernel nothing is published and neither is called.
        """
        self.flush_waiting()
        try:
            now = self._request()
            if now is not None:
                self._publish_end(now, widget(), state())
        except Exception:
            log.exception("the turn's transcript could not be published")

    def _publish_end(self, now: str, widget_bundle: Bundle, state: TurnState) -> None:
        transcript = {"text/html": to_html(state, self.key), "text/plain": to_text(state)}
        with self._lock:
            widget_id, transcript_id, shown_in = (
                self.widget_display_id,
                self.transcript_display_id,
                self.shown_in,
            )
        if transcript_id is not None:
            self._publish(transcript, transcript_id, True)
        elif shown_in == now:
            found = self._publish(transcript, True, False)
            with self._lock:
                self.transcript_display_id = found
        elif widget_id is not None:
            widget_bundle = {**widget_bundle, "text/html": transcript["text/html"]}
        if widget_id is not None and WIDGET_VIEW in widget_bundle:
            self._publish(widget_bundle, widget_id, True)
