"""The fake Anthropic Messages server the Claude Code tests talk to, on 127.0.0.1.

It is the package's own scripted server (``mead_notebook.adapters.claude_agent.scripted``);
these names stay for the tests that import them from here.
"""

from __future__ import annotations

from mead_notebook.adapters.claude_agent.scripted import (
    ScriptedServer as AgentServer,
)
from mead_notebook.adapters.claude_agent.scripted import (
    Text,
    Think,
    Use,
    frames,
)

__all__ = ["AgentServer", "Text", "Think", "Use", "frames"]
