"""Fixtures for provider tests: a scripted HTTP server on 127.0.0.1 and a clean client pool."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pi_notebook.ai.providers import aclose_client

from .server import ScriptServer


@pytest.fixture
async def server() -> AsyncIterator[ScriptServer]:
    srv = ScriptServer()
    await srv.start()
    try:
        yield srv
    finally:
        await aclose_client()
        await srv.stop()
