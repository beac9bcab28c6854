"""A Zalo-only clinic with ``CONSOLE_HANDOFF``, end to end: ``medbot run`` (a subprocess) with Zalo alone and no
Telegram token, the fake Zalo OpenAPI, the real database. A patient asks for a person; a clinician answers
from the console that process serves; the reply reaches the patient through Zalo at once (the process's
own Zalo sender, wired by ``bot.wiring.attach_handoff``), and closing tells them."""

from __future__ import annotations

import asyncpg
import httpx

from bot import handoff as ho
from db import handoffs
from testkit.bot_process import StartBot
from testkit.fakes.zalo_server import FakeZalo
from tests.console_support import CLINICIAN, add_staff
from tests.e2e.test_crash_recovery import OA_SECRET, ZaloSender
from tests.integration.test_console import csrf_of, log_in


async def test_a_zalo_only_process_hands_off_to_the_console(db: asyncpg.Pool, start_bot: StartBot) -> None:
    zalo = FakeZalo()
    await zalo.start()
    try:
        env = {
            "TELEGRAM_BOT_TOKEN": "", "CONSOLE_HANDOFF": "true", "ZALO_APP_ID": zalo.app_id,
            "ZALO_APP_SECRET": zalo.app_secret, "ZALO_OA_SECRET": OA_SECRET,
            "ZALO_OA_ACCESS_TOKEN": zalo.access_token, "ZALO_OA_REFRESH_TOKEN": zalo.refresh_token,
            "ZALO_API_BASE": zalo.base_url, "ZALO_OAUTH_BASE": zalo.base_url,
        }  # fmt: skip
        proc = await start_bot(env=env, wait_webhook=False)
        sender = ZaloSender(zalo)
        assert await sender.post(proc, sender.event("z-77", "#role:patient_dental", "a1")) == 200
        assert await sender.post(proc, sender.event("z-77", "cho tôi gặp nhân viên tư vấn", "a2")) == 200
        assert "Nhân viên sẽ trả lời bạn ngay tại đây" in zalo.to("z-77")[-1].text
        [row] = await db.fetch("SELECT id FROM handoffs WHERE status = 'open'")
        await add_staff(db)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{proc.port}", timeout=30) as staff:
            await log_in(staff, *CLINICIAN)
            page = (await staff.get(f"/console/handoffs/{row['id']}")).text
            n = len(zalo.to("z-77"))
            await staff.post(
                f"/console/handoffs/{row['id']}/reply",
                data={"text": "Mời bạn ghé phòng khám lúc 9 giờ.", "csrf_token": csrf_of(page)},
            )
            got = await zalo.wait_for_messages(n + 1, "z-77", within=10)
            assert got[n].text == "👩‍⚕️ Nhân viên phòng khám: Mời bạn ghé phòng khám lúc 9 giờ."
            await staff.post(f"/console/handoffs/{row['id']}/close", data={"csrf_token": csrf_of(page)})
            assert (await zalo.wait_for_messages(n + 2, "z-77", within=10))[n + 1].text == ho.CLOSED_BY_STAFF
        closed = await handoffs.get(db, row["id"])
        assert closed is not None and closed.closed_by == f"console:{CLINICIAN[0]}"
    finally:
        await zalo.stop()
