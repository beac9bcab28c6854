"""The Zalo OA channel end to end in one process: signed events over real HTTP into the webhook app, the
real engine and database, answers out to a fake Zalo OpenAPI (real HTTP)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path

import asyncpg
import httpx

from bot.worker.jobs import default_jobs
from bot.worker.runner import run_job
from bot.zalo import tokens as zalo_tokens
from bot.zalo.bot import ERASE_CONFIRM, ERASED, NOT_TEXT, PICK_ROLE_FIRST, SUGGESTION_EXPIRED
from bot.zalo.client import TEXT_LIMIT
from bot.zalo.tokens import ZaloTokens
from db import channel_tokens, users
from engine.roles import load_roles
from tests.integration.worker_helpers import make_ctx
from tests.integration.zalo_support import LONG_QUESTION, ROLE, count_rows, zalo_harness

ZALO_SETTINGS = (
    "zalo_app_id", "zalo_app_secret", "zalo_oa_secret", "zalo_oa_access_token", "zalo_oa_refresh_token",
    "zalo_api_base", "zalo_oauth_base",
)  # fmt: skip


async def test_follow_role_question_answer_and_suggestion_tap(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        # follow → welcome, disclaimer, role picker (a patient's: the doctor roles are for clinic staff)
        await z.post(z.event("u1", name="follow"))
        welcome = (await z.fake.wait_for_messages(1, "u1"))[-1]
        assert "115" in welcome.text and "xoá dữ liệu" in welcome.text
        assert [b["payload"] for b in welcome.buttons] == ["#role:patient_dental", "#role:patient_diabetes"]
        assert all(b["type"] == "oa.query.hide" for b in welcome.buttons)
        dental = load_roles()["patient_dental"].label
        assert welcome.buttons[0]["title"] == dental

        await z.choose_role("u1")
        assert dental in z.fake.to("u1")[-1].text
        user = await users.get(db, "zalo", "u1")
        assert user is not None and user.role == ROLE and user.consent_at is not None

        # a question → an answer citing the KB, suggestions as #sq buttons, 👍/👎
        await z.say("u1", "Răng em bị ê buốt khi uống nước lạnh là bị gì vậy ạ?")
        answer = z.fake.to("u1")[-1]
        assert "mòn men răng" in answer.text and "📚 Nguồn: tài liệu hỏi đáp của phòng khám" in answer.text
        assert "D001" not in answer.text  # KB codes are for the clinic's doctors
        suggestions = [b for b in answer.buttons if b["payload"].startswith("#sq:")]
        assert 1 <= len(suggestions) <= 3 and len(answer.buttons) <= 5
        assert [b["payload"][:4] for b in answer.buttons[-2:]] == ["#fb:", "#fb:"]
        assert all(len(b["title"]) <= 100 for b in answer.buttons)

        # tapping a suggestion: Zalo sends its payload back as user_send_text
        tapped = suggestions[0]
        before = len(z.fake.to("u1"))
        await z.say("u1", tapped["payload"])
        follow_up = z.fake.to("u1")[before:]
        assert len(follow_up) == 1 and follow_up[0].text != SUGGESTION_EXPIRED
        _, set_id, index = tapped["payload"].split(":")
        question = await db.fetchval("SELECT questions[$2] FROM suggestion_sets WHERE id = $1", int(set_id),
                                     int(index) + 1)  # fmt: skip
        last_in = await db.fetchval(
            "SELECT text FROM messages WHERE direction = 'in' ORDER BY id DESC LIMIT 1"
        )
        assert last_in == question  # handled exactly like typing the suggestion

        # 👍 on the first answer is recorded for that user's message
        await z.say("u1", answer.buttons[-2]["payload"])
        assert await db.fetchval("SELECT rating FROM feedback") == 1


async def test_suggestion_payload_is_validated_like_typed_text(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        for uid in ("a", "b"):
            await z.choose_role(uid)
        await z.say("a", "Sau khi nhổ răng khôn nên ăn gì?")
        payload = next(b["payload"] for b in z.fake.to("a")[-1].buttons if b["payload"].startswith("#sq:"))
        rows = await count_rows(db)
        for typed in (payload, "#sq:999999:0", "#sq:1:99", "#sq:abc", "#sq:"):
            await z.say("b", typed)  # b types a's payload, unknown sets, malformed ones
            assert z.fake.to("b")[-1].text == SUGGESTION_EXPIRED
        after = await count_rows(db)
        assert after["messages"] == rows["messages"]  # nothing answered, nothing stored
        await z.say("b", "#fb:1:1")  # someone else's message
        assert await db.fetchval("SELECT count(*) FROM feedback") == 0


async def test_bad_or_missing_signature_is_401_and_stores_nothing(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        event = z.event("intruder", "Răng bị ê buốt khi uống nước lạnh là bệnh gì?")
        raw = json.dumps(event).encode()
        good = z.signature(raw, event)
        digest = good.removeprefix("mac=")
        hmac_sig = (
            "mac="
            + hmac.new(
                b"oa-secret-key", z.fake.app_id.encode() + raw + event["timestamp"].encode(), hashlib.sha256
            ).hexdigest()
        )
        other_ts = "mac=" + hashlib.sha256(z.fake.app_id.encode() + raw + b"1" + b"oa-secret-key").hexdigest()
        before = await count_rows(db)
        cases: list[tuple[str | None, bytes]] = [
            (None, raw),  # missing header
            ("mac=" + "0" * 64, raw),  # wrong
            (digest, raw),  # without "mac="
            (hmac_sig, raw),  # HMAC is not Zalo's rule
            (other_ts, raw),  # signed with another timestamp
            (good, raw.replace(b"intruder", b"intrudes")),  # body changed after signing
        ]
        for signature, body in cases:
            response = await z.post(event, signature=signature, body=body)
            assert response.status_code == 401, signature
        assert (await z.post(event, signature=good, body=b"not json")).status_code == 400  # nothing to verify
        assert await count_rows(db) == before
        assert z.fake.attempts == []
        # the very same event, correctly signed, is accepted
        assert (await z.post(event, body=raw)).status_code == 200


async def test_duplicate_msg_id_gets_one_reply(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await z.choose_role("u2")
        event = z.event("u2", "Bao lâu nên đi lấy cao răng một lần?", msg_id="dup-1")
        raw = json.dumps(event).encode()
        first, second = await asyncio.gather(z.post(event, body=raw), z.post(event, body=raw))
        third = await z.post(event, body=raw)
        # A copy that arrives while the first is being answered is not acknowledged (503: Zalo may try it again
        # later, it is then dropped); once answered, every copy gets 200.
        assert sorted([first.status_code, second.status_code]) in ([200, 200], [200, 503])
        assert third.status_code == 200
        answers = [m for m in z.fake.to("u2") if "6 tháng" in m.text]
        assert len(answers) == 1
        incoming = await db.fetchval("SELECT count(*) FROM messages WHERE direction = 'in'")
        assert incoming == 1  # the #role tap is not a question; only one stored question


async def test_invalid_token_refreshes_then_resends_once(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await z.choose_role("u3")
        z.fake.revoke_access_token()
        await z.say("u3", "Trẻ mấy tuổi thì nên đi khám răng lần đầu?")
        assert z.fake.refresh_calls == 1 and z.fake.refresh_errors == 0
        delivered = z.fake.to("u3")[-1]
        assert "1 tuổi" in delivered.text and delivered.token == z.fake.access_token
        row = await channel_tokens.get(db, "zalo")
        assert row is not None and row.access_token == z.fake.access_token
        assert row.refresh_token == z.fake.refresh_token and row.expires_at is not None
        # the next message uses the stored token: no more refreshes
        await z.say("u3", "Niềng răng mất bao lâu?")
        assert z.fake.refresh_calls == 1


async def test_two_concurrent_refreshes_call_zalo_once(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        z.fake.refresh_delay = 0.3  # both processes are inside refresh() while Zalo answers
        stale = await z.channel.tokens.access_token()
        z.fake.revoke_access_token()
        # two "processes": their own token managers and HTTP clients, one database
        a, b = ZaloTokens(db, z.settings), ZaloTokens(db, z.settings)
        try:
            one, two = await asyncio.gather(a.refresh(stale=stale), b.refresh(stale=stale))
        finally:
            await a.close()
            await b.close()
        assert z.fake.refresh_calls == 1 and z.fake.refresh_errors == 0
        assert one.access_token == two.access_token == z.fake.access_token
        assert sorted([one.refreshed, two.refreshed]) == [False, True]

        # the worker's proactive refresh: fresh token → nothing to do; about to expire → one refresh
        results = await asyncio.gather(*(zalo_tokens.refresh_if_needed(db, z.settings) for _ in range(2)))
        assert [r["refreshed"] for r in results] == [False, False] and z.fake.refresh_calls == 1
        await db.execute("UPDATE channel_tokens SET expires_at = now() + interval '10 minutes'")
        results = await asyncio.gather(*(zalo_tokens.refresh_if_needed(db, z.settings) for _ in range(2)))
        assert sorted(r["refreshed"] for r in results) == [False, True]
        assert z.fake.refresh_calls == 2 and z.fake.refresh_errors == 0


async def test_worker_job_refreshes_through_the_hook(db: asyncpg.Pool, tmp_path: Path) -> None:
    async with zalo_harness(db, seed=False) as z:
        zalo = {k: getattr(z.settings, k) for k in ZALO_SETTINGS}
        ctx = make_ctx(db, tmp_path, **zalo)
        job = next(j for j in default_jobs() if j.name == "zalo_token_refresh")
        first = await run_job(ctx, job)
        assert first.status == "ok" and first.counts["refreshed"] is True  # expiry unknown after seeding
        second = await run_job(ctx, job)
        assert second.status == "ok" and second.counts["refreshed"] is False  # 25 hours left
        assert z.fake.refresh_calls == 1


async def test_long_answer_arrives_as_two_messages(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await z.choose_role("u4")
        before = len(z.fake.to("u4"))
        await z.say("u4", LONG_QUESTION)
        parts = z.fake.to("u4")[before:]
        assert len(parts) == 2
        assert all(len(p.text) <= TEXT_LIMIT for p in parts)
        assert parts[0].buttons == [] and parts[1].buttons  # buttons ride on the last part
        assert "Phần 1." in parts[0].text and "Phần 7." in parts[1].text
        assert parts[0].text.rstrip().endswith(".")  # cut on a paragraph boundary
        stored = await db.fetchval(
            "SELECT text FROM messages WHERE direction = 'out' ORDER BY id DESC LIMIT 1"
        )
        assert len(stored) > 3000


async def test_error_230_marks_user_and_stops_sending(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        await z.choose_role("u5")
        attempts = len(z.fake.attempts)
        z.fake.fail_next(230, "User has not interacted with the OA in the last 7 days", user_id="u5")
        response = await z.say("u5", LONG_QUESTION)  # a two-part answer: the first part fails
        assert response.status_code == 200
        assert len(z.fake.attempts) == attempts + 1  # nothing more was tried (not the 2nd part, no apology)
        row = await db.fetchrow("SELECT active, inactive_reason FROM users WHERE external_id = 'u5'")
        assert row["active"] is False and row["inactive_reason"] == "zalo_230"
        assert await z.channel.bot.push("u5", "Nhắc lịch tái khám") is False
        assert len(z.fake.attempts) == attempts + 1
        # the user writes again: the window is open, they are answered and active again
        await z.say("u5", "Niềng răng mất bao lâu?")
        assert "18 đến 30 tháng" in z.fake.to("u5")[-1].text
        assert await db.fetchval("SELECT active FROM users WHERE external_id = 'u5'") is True


async def test_other_message_kinds_commands_and_erase(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        sticker = z.event("u6", name="user_send_sticker")
        sticker["message"]["attachments"] = [{"type": "sticker", "payload": {"id": "1"}}]
        assert (await z.post(sticker)).status_code == 200
        assert z.fake.to("u6")[-1].text == NOT_TEXT
        # the OA's own messages echoed back are ignored
        echo = z.event("oa-1", "hello", name="oa_send_text")
        assert (await z.post(echo)).status_code == 200 and len(z.fake.to("oa-1")) == 0

        await z.say("u6", "Răng bị ê buốt khi uống nước lạnh là bệnh gì?")  # no role yet
        asked = z.fake.to("u6")[-1]
        assert asked.text == PICK_ROLE_FIRST and len(asked.buttons) == 2  # the patient roles
        # an emergency does not wait for a role: 115 first, then the picker
        before = len(z.fake.to("u6"))
        await z.say("u6", "Bố tôi đau ngực dữ dội, khó thở, vã mồ hôi")
        emergency, picker = z.fake.to("u6")[before:]
        assert "115" in emergency.text and picker.text == PICK_ROLE_FIRST
        await db.execute("DELETE FROM messages")
        await z.choose_role("u6")
        await z.say("u6", "Răng bị ê buốt khi uống nước lạnh là bệnh gì?")
        assert await db.fetchval("SELECT count(*) FROM messages") == 2

        await z.say("u6", "Xoá dữ liệu")
        confirm = z.fake.to("u6")[-1]
        assert confirm.text == ERASE_CONFIRM
        assert [b["payload"] for b in confirm.buttons] == ["#erase:yes", "#erase:no"]
        await z.say("u6", "#erase:yes")
        assert z.fake.to("u6")[-1].text == ERASED
        assert await users.get(db, "zalo", "u6") is None
        assert await db.fetchval("SELECT count(*) FROM messages") == 0


async def test_anonymous_chat_is_answered_in_its_conversation(db: asyncpg.Pool) -> None:
    async with zalo_harness(db) as z:
        event = z.event("anon7", "#role:patient_dental", name="anonymous_send_text")
        event["message"]["conversation_id"] = "conv-7"
        assert (await z.post(event)).status_code == 200
        event = z.event("anon7", "Niềng răng mất bao lâu?", name="anonymous_send_text")
        event["message"]["conversation_id"] = "conv-7"
        assert (await z.post(event)).status_code == 200
        reply = z.fake.to("anon7")[-1]
        assert reply.recipient == {"anonymous_id": "anon7", "conversation_id": "conv-7"}
        assert "18 đến 30 tháng" in reply.text
        assert await users.get(db, "zalo", "anon:anon7") is not None


async def test_healthz(db: asyncpg.Pool) -> None:
    async with zalo_harness(db, seed=False) as z:
        response = await z.http.get(f"{z.url}/healthz")
        assert response.status_code == 200 and response.json() == {"ok": True}
        assert isinstance(response, httpx.Response)
