from __future__ import annotations

from collections.abc import Iterator

import pytest
from servers.provider_server import ProviderServer


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A fake model provider on loopback, speaking the providers' streaming formats."""
    with ProviderServer() as s:
        yield s
