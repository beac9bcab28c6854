"""The staff handoff answered from the clinic console ("Hỗ trợ trực tiếp"), over real HTTP against the real
database: a Zalo-only clinic with ``CONSOLE_HANDOFF`` (the Zalo-only app as ``medbot run`` serves it, its
console included; the fake Zalo OpenAPI receives what the patient reads), a Telegram clinic whose console reply
also reaches the staff group's topic (fake Bot API), and ``medbot web``, which has no sender (the reply waits in
the outbox for the worker). Who answered is recorded and shown to staff, never to the patient."""

from __future__ import annotations

import re

import asyncpg
import httpx

from bot import handoff as ho
from bot.runtime import Runtime
from bot.telegram.topic_queue import QueuedDesk
from bot.wiring import attach_handoff, build_service, console_services
from bot.zalo.outbox import ZaloOutboxKicker
from db import conversations, handoffs, outbox, users
from db.settings import load_settings
from tests.console_support import ADMIN, CLINICIAN, add_staff, console_server
from tests.integration.test_console import FORBIDDEN, csrf_of, log_in
from tests.integration.test_handoff import CHEST_PAIN, STAFF, Desk, desk, patient  # noqa: F401 (fixture)
from tests.integration.zalo_support import zalo_harness

PHONE = "0243 123 456"


def nav_count(page: str) -> str | None:
    found = re.search(r'Hỗ trợ trực tiếp <span class="count"[^>]*>(\d+)</span>', page)
    return found.group(1) if found else None


async def test_a_zalo_only_clinic_answers_from_the_console(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False, console_handoff=True, clinic_phone=PHONE) as z:
        kicker = ZaloOutboxKicker(z.channel.client, db)
        assert attach_handoff(z.runtime, z.service, kicks={"zalo": kicker})  # as bot.main does
        await add_staff(db)
        try:
            await z.choose_role("zc1")
            await z.say("zc1", "cho tôi gặp nhân viên tư vấn")
            assert "Nhân viên sẽ trả lời bạn ngay tại đây" in z.fake.to("zc1")[-1].text
            lan = await users.get(db, "zalo", "zc1")
            assert lan is not None
            row = await handoffs.open_for_user(db, lan.id)
            assert row is not None and row.staff_chat_id is None and row.topic_id is None  # no staff group
            n = len(z.fake.to("zc1"))
            await z.say("zc1", "răng hàm dưới đau nhức từ hôm qua")
            assert len(z.fake.to("zc1")) == n  # the bot stays silent: staff answer

            async with httpx.AsyncClient(base_url=z.url, timeout=30) as staff:
                await log_in(staff, *CLINICIAN)
                listing = (await staff.get("/console/handoffs")).text
                mine = listing.split(f"BN-{lan.id:05d}")[1].split("</tr>")[0]
                assert (
                    "Zalo" in mine and "Bệnh nhân muốn gặp nhân viên" in mine and "Đang chờ trả lời" in mine
                )
                assert nav_count(listing) == "1"
                page = (await staff.get(f"/console/handoffs/{row.id}")).text
                assert "răng hàm dưới đau nhức từ hôm qua" in page and "zc1" not in page
                views = await db.fetchval(
                    "SELECT count(*) FROM console_audit WHERE action = 'view_conversation'"
                )
                assert views == 1  # reading it is a conversation view

                forged = await staff.post(f"/console/handoffs/{row.id}/reply", data={"text": "không có mã"})
                assert forged.status_code == 403 and FORBIDDEN in forged.text
                empty = await staff.post(
                    f"/console/handoffs/{row.id}/reply", data={"text": " ", "csrf_token": csrf_of(page)}
                )
                assert empty.status_code == 303
                assert "Hãy nhập nội dung trả lời" in (await staff.get(empty.headers["location"])).text
                sent = await staff.post(
                    f"/console/handoffs/{row.id}/reply",
                    data={"text": "Bạn ghé phòng khám chiều nay nhé.", "csrf_token": csrf_of(page)},
                )
                assert sent.status_code == 303
                got = await z.fake.wait_for_messages(n + 1, "zc1")
                assert got[n].text == "👩‍⚕️ Nhân viên phòng khám: Bạn ghé phòng khám chiều nay nhé."
                assert len(got) == n + 1  # once: the forged and the empty ones sent nothing
                after = (await staff.get(f"/console/handoffs/{row.id}")).text
                assert "Đã gửi câu trả lời cho bệnh nhân." in after
                assert "Nhân viên phòng khám (bs.minh@phongkham.vn, trên trang quản trị)" in after
                listing = (await staff.get("/console/handoffs")).text
                assert "Đã trả lời" in listing
                assert nav_count(listing) is None  # nobody waits

                # An emergency after more than an hour of silence: the 115 answer, and stored in the
                # handoff's conversation (not a new one), where the console shows it; the patient waits again.
                await db.execute(
                    "UPDATE conversations SET last_activity_at = now() - interval '2 hours' WHERE user_id = $1",
                    lan.id,
                )
                await z.say("zc1", CHEST_PAIN)
                assert "115" in z.fake.to("zc1")[-1].text
                assert await db.fetchval("SELECT count(*) FROM conversations WHERE user_id = $1", lan.id) == 1
                again = (await staff.get(f"/console/handoffs/{row.id}")).text
                assert CHEST_PAIN in again and "Dấu hiệu nguy hiểm" in again
                assert nav_count(again) == "1"

                # counted first: the closing notice may reach the patient before the POST returns
                before_close = len(z.fake.to("zc1"))
                closing = await staff.post(
                    f"/console/handoffs/{row.id}/close", data={"csrf_token": csrf_of(again)}
                )
                assert closing.status_code == 303
                told = await z.fake.wait_for_messages(before_close + 1, "zc1")
                assert told[-1].text == ho.CLOSED_BY_STAFF
                assert (
                    "Hiện không có bệnh nhân nào đang chờ nhân viên."
                    in (await staff.get("/console/handoffs")).text
                )
            closed = await handoffs.get(db, row.id)
            assert closed is not None and closed.closed_by == "console:bs.minh@phongkham.vn"
            assert all("@" not in m.text for m in z.fake.to("zc1"))  # no staff identity to the patient
            audited = await db.fetch(
                "SELECT action FROM console_audit WHERE action LIKE 'handoff_%' ORDER BY id"
            )
            assert [r["action"] for r in audited] == ["handoff_reply", "handoff_close"]
            n = len(z.fake.to("zc1"))
            await z.say("zc1", "niềng răng mất bao lâu")
            assert len(z.fake.to("zc1")) == n + 1  # the bot answers again
        finally:
            await kicker.stop()


async def test_without_console_handoff_or_staff_group_a_person_request_gets_the_phone(
    db: asyncpg.Pool,
) -> None:
    async with zalo_harness(db, seed=False, clinic_phone=PHONE) as z:
        kicker = ZaloOutboxKicker(z.channel.client, db)
        assert not attach_handoff(z.runtime, z.service, kicks={"zalo": kicker})
        await z.choose_role("zc2")
        await z.say("zc2", "cho tôi gặp nhân viên tư vấn")
        told = z.fake.to("zc2")[-1].text
        assert PHONE in told and "ngay tại đây" not in told
        assert await db.fetchval("SELECT count(*) FROM handoffs") == 0


async def test_a_console_reply_reaches_the_telegram_topic_too(
    db: asyncpg.Pool,
    db_url: str,
    desk: Desk,  # noqa: F811
) -> None:
    service, fake = desk.service, desk.fake
    lan = await patient(service, 8201)
    assert (await service.respond(lan, "cho tôi gặp bác sĩ", channel="telegram")).handoff_opened
    [thread] = desk.topics()
    row = await handoffs.open_for_user(db, lan.id)
    assert row is not None
    assert await service.relay_to_patient(STAFF, thread, "Chào bạn.", by=handoffs.by_telegram(42, "Lan"))
    await add_staff(db)
    settings = load_settings(database_url=db_url, openai_api_key=None)
    services = console_services(Runtime(settings=settings, url=db_url, pool=db), service)
    async with (
        console_server(db, db_url, services) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        await log_in(http, *ADMIN)
        page = (await http.get(f"/console/handoffs/{row.id}")).text
        assert "Nhân viên phòng khám (Lan, Telegram 42)" in page
        await http.post(
            f"/console/handoffs/{row.id}/reply",
            data={"text": "Bạn đến lúc 15 giờ nhé.", "csrf_token": csrf_of(page)},
        )
        got = await fake.wait_for_messages(8201, 2)
        assert got[1].plain == "👩‍⚕️ Nhân viên phòng khám: Bạn đến lúc 15 giờ nhé."
        assert (
            desk.topic(thread)[-1]
            == "👩‍⚕️ lan.admin@phongkham.vn (trả lời từ trang quản trị): Bạn đến lúc 15 giờ nhé."
        )
        await http.post(f"/console/handoffs/{row.id}/close", data={"csrf_token": csrf_of(page)})
        assert (await fake.wait_for_messages(8201, 3))[2].plain == ho.CLOSED_BY_STAFF
        assert "lan.admin@phongkham.vn, trên trang quản trị" in desk.topic(thread)[-1]
        conv = await db.fetchval("SELECT conversation_id FROM messages WHERE user_id = $1 LIMIT 1", lan.id)
        shown = (await http.get(f"/console/conversations/{conv}")).text
    assert "bởi nhân viên (lan.admin@phongkham.vn, trên trang quản trị)" in shown
    assert shown.count("Nhân viên phòng khám (Lan, Telegram 42)") == 1
    assert "Nhân viên phòng khám (lan.admin@phongkham.vn, trên trang quản trị)" in shown


async def test_medbot_web_queues_the_reply_and_the_topic_post_for_the_worker(
    db: asyncpg.Pool, db_url: str
) -> None:
    # as bot.web_cli.serve builds it: no channel sender, the staff group reached through the outbox only
    settings = load_settings(database_url=db_url, openai_api_key=None, staff_chat_id=STAFF)
    runtime = Runtime(settings=settings, url=db_url, pool=db)
    service = await build_service(runtime)
    attach_handoff(runtime, service, desk=QueuedDesk(db, STAFF))
    minh = await users.get_or_create(db, "zalo", "zc3")
    opened = await handoffs.open_handoff(db, minh.id, "zalo", STAFF, "human")
    assert opened is not None
    await handoffs.set_topic(db, opened.id, 77)
    await add_staff(db)
    services = console_services(runtime, service)
    async with (
        console_server(db, db_url, services) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        assert (await http.get("/console/handoffs")).status_code == 303  # signed out: the login page
        await log_in(http, *CLINICIAN)
        page = (await http.get(f"/console/handoffs/{opened.id}")).text
        sent = await http.post(
            f"/console/handoffs/{opened.id}/reply", data={"text": "Chào bạn.", "csrf_token": csrf_of(page)}
        )
        assert sent.status_code == 303
        # no sender here: the worker's zalo_outbox and outbox_drain jobs send them
        [queued] = await outbox.pending(db, "zalo")
        assert (
            queued["chat_id"] == "zc3" and queued["payload"]["text"] == "👩‍⚕️ Nhân viên phòng khám: Chào bạn."
        )
        [topic] = await outbox.pending(db)
        assert topic["chat_id"] == str(STAFF) and topic["payload"]["message_thread_id"] == 77
        assert topic["payload"]["text"] == f"👩‍⚕️ {CLINICIAN[0]} (trả lời từ trang quản trị): Chào bạn."
        await handoffs.close(db, opened.id, handoffs.PATIENT)
        late = await http.post(
            f"/console/handoffs/{opened.id}/reply",
            data={"text": "Còn đó không?", "csrf_token": csrf_of(page)},
        )
        assert "đã kết thúc; tin nhắn chưa được gửi" in (await http.get(late.headers["location"])).text
        assert len(await outbox.pending(db, "zalo")) == 1
        assert (await http.get("/console/handoffs/999999")).status_code == 404


async def test_the_handoff_page_polls_its_messages_without_a_view_each_time(
    http: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    hung = await users.get_or_create(db, "zalo", "zc4")
    opened = await handoffs.open_handoff(db, hung.id, "zalo", None, "human")
    assert opened is not None
    await conversations.store_relayed(db, hung.id, "in", "răng cửa bị mẻ một góc")
    live = f"/console/handoffs/{opened.id}/messages"
    anonymous = await http.get(live)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/console/login"
    assert "mẻ một góc" not in anonymous.text

    await log_in(http, *CLINICIAN)
    page = (await http.get(f"/console/handoffs/{opened.id}")).text
    shown = re.search(r'data-conversation="(\d+)"', page)
    assert shown is not None and 'src="/console/static/handoff.js"' in page
    await conversations.store_relayed(db, hung.id, "in", "giờ ăn gì cũng ê")  # the patient writes again
    polled = await http.get(live, params={"conversation": shown.group(1)})
    assert polled.status_code == 200 and "no-store" in polled.headers["cache-control"]
    assert "giờ ăn gì cũng ê" in polled.text and "mẻ một góc" in polled.text
    assert 'data-state="open"' in polled.text and "<html" not in polled.text  # the live part alone
    version = re.compile(r'data-version="([^"]+)"')
    assert version.findall(polled.text) != version.findall(page)
    assert (await http.get(live, params={"conversation": shown.group(1)})).text == polled.text
    assert "Đang chờ trả lời dưới 1 phút" in polled.text
    # minutes pass with nobody answering: the next poll says how long, with a new version
    await db.execute(
        "UPDATE handoffs SET opened_at = opened_at - interval '7 minutes' WHERE id = $1", opened.id
    )
    later = (await http.get(live, params={"conversation": shown.group(1)})).text
    assert "Đang chờ trả lời 7 phút" in later and version.findall(later) != version.findall(polled.text)
    views = await db.fetchval("SELECT count(*) FROM console_audit WHERE action = 'view_conversation'")
    assert views == 1  # the page's opening only, not each poll

    await handoffs.close(db, opened.id, handoffs.PATIENT)
    closed = (await http.get(live, params={"conversation": shown.group(1)})).text
    assert 'data-state="closed"' in closed and "Yêu cầu hỗ trợ này đã kết thúc" in closed
    assert (await http.get("/console/handoffs/999999/messages")).status_code == 404
