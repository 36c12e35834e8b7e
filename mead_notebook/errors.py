"""The errors mead_notebook raises on purpose."""

from __future__ import annotations

__all__ = ["MeadError", "UnsupportedKernelError"]


class MeadError(Exception):
    """Base class of every error mead_notebook raises on purpose; catch it to catch them all."""


class UnsupportedKernelError(MeadError, RuntimeError):
    """The running Jupyter kernel lacks a piece that waiting for the widget relies on.

    The message says what is missing and what to do instead (an async cell with
    ``await router.arun(...)``, or ``router.start(...)``).
    """
