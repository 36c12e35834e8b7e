"""The widget in front of agents built with other frameworks.

Each adapter runs the framework's own agent and reports every tool call through
the contract (:mod:`mead_notebook.interaction`), as ``Router`` does:

- :mod:`mead_notebook.adapters.langchain`: LangChain ``create_agent`` agents and
  LangGraph graphs with a ``ToolNode`` (extra ``mead-notebook[langchain]``);
- :mod:`mead_notebook.adapters.pydantic_ai`: pydantic-ai agents (extra
  ``mead-notebook[pydantic-ai]``);
- :mod:`mead_notebook.adapters.acp`: any Agent Client Protocol agent (Claude
  Code, Codex, Gemini CLI), run as a process of its own (extra ``mead-notebook[acp]``).

Both offer ``run`` (blocks a cell), ``arun`` (an async cell awaits it) and
``start`` (returns a :class:`~mead_notebook.turn.Turn` at once), each returning
an :class:`AgentResult`; and a hook for people who run the framework's loop
themselves (``langchain.middleware``, ``pydantic_ai.capability``).

What they share, and where a new framework plugs in, is
:mod:`mead_notebook.adapters.base`. Importing this package imports no framework.
"""

from __future__ import annotations

from .base import AgentResult

__all__ = ["AgentResult"]
