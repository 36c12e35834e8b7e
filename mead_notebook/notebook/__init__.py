"""The notebook interaction: the widget, its questions, cards, text and protocol."""

from __future__ import annotations

from .widget import NotebookInteraction

__all__ = ["NotebookInteraction"]
