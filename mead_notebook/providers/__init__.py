"""Real models: OpenAI (and compatible servers) and Anthropic, each behind its extra.

Each class is imported on first use, so a missing extra is an ``ImportError``
naming the extra to install only when that class is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._anthropic import AnthropicModel
    from ._openai import OpenAIModel

__all__ = ["AnthropicModel", "OpenAIModel"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIModel":
        from ._openai import OpenAIModel

        return OpenAIModel
    if name == "AnthropicModel":
        from ._anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
