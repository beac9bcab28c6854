"""``python -m testkit.screenshots`` (``make screenshots``): the README's pictures of the clinic console, taken
from the developer's own database.

1. ``medbot setup`` (what ``make run`` does first: the embedded PostgreSQL, migrations, the models, the sample
   KB when the KB is empty), through :func:`bot.setup.setup`.
2. A throwaway clinician account, ``demo@medbot.local`` with a random password (one left by an interrupted run
   is replaced).
3. The console as ``medbot web`` builds it, served in-process on a free port of 127.0.0.1 (``testkit.browser``).
4. The system Chromium (``testkit.browser``'s flags; Playwright's own browsers are never installed) signs in,
   asks "Thử bot" a patient's question about the sample dental KB without diacritics and saves
   ``docs/screenshots/console-try.png`` (the reply, its KB code and the reasoning), then opens the cited entry
   and saves ``docs/screenshots/console-kb-entry.png``; then signs out. 1280 pixels wide, device scale 1, each
   picture down to the end of what it shows.
5. The demo account is deleted, with its "try it" user and conversation (never counted in the statistics:
   ``db.stats.TRIAL_CHANNEL``); its sign-in and sign-out stay in the audit log as a deleted account's.

Offline: the LLM is switched off whatever ``OPENAI_API_KEY`` says (the pictures show the offline engine), and
the browser may load nothing but the console itself (any other request is aborted and fails the run).
The other settings are the developer's (``.env``, the environment): ``CLINIC_NAME`` is the header's name.
Chromium draws the replies' emoji (❓ 📚 🦷) only with a colour emoji font (Debian: ``fonts-noto-color-emoji``);
without one the run warns, as the pictures would show empty boxes.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import asyncpg
from playwright.async_api import FloatRect, Locator, Page, Route, async_playwright, expect

from bot.logs import setup_logging
from bot.runtime import open_runtime
from bot.setup import setup
from bot.web.app import build_app
from bot.wiring import chat_service, console_services
from db import staff as staff_db
from db import users
from db.settings import Settings, SettingsError, load_settings
from db.stats import TRIAL_CHANNEL
from testkit.browser import chromium_path, launch_chromium, serving

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
TRY_PNG = OUT / "console-try.png"
ENTRY_PNG = OUT / "console-kb-entry.png"
DEMO_EMAIL = "demo@medbot.local"
ROLE = "patient_dental"
QUESTION = "rang khon moc lech co can nho khong"  # as patients type it: no diacritics
VIEWPORT = {"width": 1280, "height": 900}
MARGIN = 16  # pixels kept below the part a picture ends with
MAX_BYTES = 300_000


async def remove_demo(pool: asyncpg.Pool) -> None:
    """The demo account gone, with its "try it" user (and so its trial conversations)."""
    account = await staff_db.get_by_email(pool, DEMO_EMAIL)
    if account is None:
        return
    trial = await users.get(pool, TRIAL_CHANNEL, str(account.id))
    if trial is not None:
        await users.erase(pool, trial.id)
    await staff_db.delete_account(pool, DEMO_EMAIL)


async def down_to(page: Page, part: Locator) -> FloatRect:
    """The page's full width from its top to a little below ``part``."""
    box = await part.bounding_box()
    if box is None:
        raise RuntimeError(f"{part} is not on the page {page.url}")
    return {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": box["y"] + box["height"] + MARGIN}


async def sign_in(page: Page, base: str, email: str, password: str) -> None:
    await page.goto(f"{base}/console/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Mật khẩu").fill(password)
    await page.get_by_role("button", name="Đăng nhập").click()
    await expect(page.get_by_role("status")).to_have_text("Đăng nhập thành công.")


async def shoot_try(page: Page, base: str) -> str:
    """Ask "Thử bot" the question and save the page; returns the KB code the reply cites."""
    await page.get_by_role("link", name="Thử bot").click()
    await page.get_by_label("Chuyên khoa").select_option(ROLE)
    await page.get_by_label("Tin nhắn").fill(QUESTION)
    await page.get_by_role("button", name="Gửi").click()
    await expect(page.get_by_label("Câu trả lời của bot")).to_be_visible()
    await expect(page.get_by_text("Trả lời từ kho kiến thức")).to_be_visible()
    code = (await page.locator("dd.citations").inner_text()).split(",")[0].strip()
    await expect(page.locator("table.hits")).to_be_visible()
    # the header, the question, the reply and the reasoning: down to the end of the exchange
    await page.screenshot(path=TRY_PNG, full_page=True, clip=await down_to(page, page.get_by_role("article")))
    return code


async def shoot_entry(page: Page, base: str, code: str) -> None:
    """Find the cited entry in the KB by its question, open it and save the page."""
    await page.get_by_role("link", name="Kho kiến thức").click()
    await page.get_by_label("Chuyên khoa").select_option(ROLE)
    await page.get_by_label("Tìm kiếm").fill(QUESTION)
    await page.get_by_role("button", name="Tìm").click()
    row = page.get_by_role("row").filter(has_text=code)
    await row.get_by_role("link").first.click()
    await expect(page.locator(".flags .tag").first).to_have_text(code)
    await page.screenshot(path=ENTRY_PNG, full_page=True, clip=await down_to(page, page.locator("main")))


async def take(settings: Settings, chromium: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    async with await open_runtime(settings, pool_size=6) as runtime:
        await remove_demo(runtime.pool)
        password = secrets.token_urlsafe(18)
        await staff_db.create_account(runtime.pool, DEMO_EMAIL, "clinician", password)
        try:
            app = build_app(console_services(runtime, await chat_service(runtime)))
            async with serving(app) as base, async_playwright() as playwright:
                browser = await launch_chromium(playwright, chromium)
                context = await browser.new_context(
                    locale="vi-VN",
                    viewport=VIEWPORT,
                    device_scale_factor=1,  # type: ignore[arg-type]
                )
                context.set_default_timeout(30_000)
                elsewhere: list[str] = []

                async def local_only(route: Route) -> None:
                    if route.request.url.startswith(f"{base}/"):
                        await route.continue_()
                    else:
                        elsewhere.append(route.request.url)
                        await route.abort()

                await context.route("**/*", local_only)
                page = await context.new_page()
                await sign_in(page, base, DEMO_EMAIL, password)
                code = await shoot_try(page, base)
                await shoot_entry(page, base, code)
                await page.get_by_role("button", name="Đăng xuất").click()
                await expect(page).to_have_url(f"{base}/console/login")
                await browser.close()
                if elsewhere:
                    raise RuntimeError(f"the console asked for something off this machine: {elsewhere}")
        finally:
            await remove_demo(runtime.pool)


def emoji_font() -> bool:
    """Whether fontconfig knows a colour emoji font (True when it cannot be asked: nothing to warn about)."""
    if shutil.which("fc-list") is None:
        return True
    found = subprocess.run(["fc-list", ":color=true"], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())


async def run() -> int:
    try:
        settings = load_settings(openai_api_key=None)
    except SettingsError as exc:
        print(f"screenshots: {exc}", file=sys.stderr)
        return 2
    setup_logging(settings.log_level)
    chromium = chromium_path()
    if chromium is None:
        print(
            "screenshots: Chromium is not installed: apt-get install -y --no-install-recommends chromium",
            file=sys.stderr,
        )
        return 1
    if not emoji_font():
        print(
            "screenshots: no colour emoji font, the emoji will be boxes: "
            "apt-get install -y --no-install-recommends fonts-noto-color-emoji",
            file=sys.stderr,
        )
    code = await setup(settings)
    if code:
        return code
    await take(settings, chromium)
    for png in (TRY_PNG, ENTRY_PNG):
        size = png.stat().st_size
        print(f"{png.relative_to(ROOT)}: {size // 1000} KB")
        if size > MAX_BYTES:
            print(f"screenshots: {png.name} is over {MAX_BYTES // 1000} KB", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run()))
