"""An IPython shell in this process, for the kernel's tools without a kernel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def shell() -> Iterator[Any]:
    """IPython's shell (``get_ipython()`` finds it), cleared after the test."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    made = InteractiveShell.instance(config=config)
    try:
        yield made
    finally:
        InteractiveShell.clear_instance()
