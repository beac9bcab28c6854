"""The browser tests' fixtures: one Chromium for the whole session (``testkit.browser``), a fresh browser
context (no cookies) per test, and the console served in-process against the suite's database.

Without Chromium the tests are skipped, except in CI (``CI`` set), where that is a failure: ``.ci/run``
installs it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import asyncpg
import pytest
from playwright.async_api import Browser, Page, async_playwright

from testkit.browser import chromium_path, launch_chromium
from tests.console_support import add_staff, console_server


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    path = chromium_path()
    if path is None:
        message = "Chromium is not installed: apt-get install -y --no-install-recommends chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright, path)
        yield browser
        await browser.close()


@pytest.fixture
async def console(db: asyncpg.Pool, db_url: str) -> AsyncIterator[str]:
    """The console's base URL, with the clinic's admin and clinician accounts."""
    await add_staff(db)
    async with console_server(db, db_url) as url:
        yield url


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(locale="vi-VN")
    context.set_default_timeout(10_000)
    page = await context.new_page()
    yield page
    await context.close()
