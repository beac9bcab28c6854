"""The Zalo webhook against hostile bodies and replays (real HTTP into the webhook app, real PostgreSQL, the
fake Zalo OpenAPI): a bad body is a 4xx with no traceback, never parsed unless signed, and an event outside
the replay window is acknowledged and ignored."""

from __future__ import annotations

import json
import logging
import time

import asyncpg
import pytest

from bot.zalo.webhook import MAX_BODY_BYTES
from tests.integration.zalo_support import count_rows, zalo_harness

QUESTION = "Bao lâu nên đi lấy cao răng một lần?"


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_hostile_bodies_get_4xx_without_a_traceback(
    db: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with zalo_harness(db) as z:
        await z.choose_role("u1")
        before = await count_rows(db)
        sent = len(z.fake.attempts)
        now = str(int(time.time() * 1000))
        deep_signed = b'{"timestamp": "' + now.encode() + b'", "x": ' + b"[" * 100_000 + b"}"
        padded = z.event("u1", QUESTION)
        padded["padding"] = "x" * MAX_BODY_BYTES
        padded_raw = json.dumps(padded).encode()
        cases: list[tuple[bytes, str | None, int]] = [
            (b"[" * 200_000, "mac=" + "0" * 64, 400),  # nested 200,000 deep, any signature
            (b"[" * 200_000, None, 401),
            (b"not json", "mac=" + "0" * 64, 400),
            (b"\xff\xfe{}", "mac=" + "0" * 64, 400),
            (deep_signed, z.signature(deep_signed, {"timestamp": now}), 400),  # signed, but unparseable
            (b"[1]", "mac=" + "0" * 64, 400),
            (padded_raw, z.signature(padded_raw, padded), 413),  # over the size bound, even when signed
        ]
        for body, signature, status in cases:
            response = await z.post({}, signature=signature, body=body)
            assert response.status_code == status, (body[:40], response.status_code, response.text)
            assert "Traceback" not in response.text and "Recursion" not in response.text
        assert _errors(caplog) == []
        assert await count_rows(db) == before
        assert len(z.fake.attempts) == sent  # nothing was answered
        # the channel still works
        await z.say("u1", QUESTION)
        assert "6 tháng" in z.fake.to("u1")[-1].text


@pytest.mark.parametrize("skew_ms", [-10 * 60 * 1000, 10 * 60 * 1000])
async def test_event_outside_the_replay_window_is_acknowledged_and_ignored(
    db: asyncpg.Pool, caplog: pytest.LogCaptureFixture, skew_ms: int
) -> None:
    caplog.set_level(logging.INFO)
    async with zalo_harness(db) as z:
        await z.choose_role("u2")
        before = await count_rows(db)
        sent = len(z.fake.attempts)
        stale = z.event("u2", QUESTION, msg_id="replayed-1")
        stale["timestamp"] = str(int(time.time() * 1000) + skew_ms)
        response = await z.post(stale)  # correctly signed, with its own timestamp
        assert response.status_code == 200  # so that Zalo does not retry it
        assert len(z.fake.attempts) == sent  # nothing answered
        assert await count_rows(db) == before  # nothing stored, not even the msg_id
        assert any(
            "zalo.webhook.stale" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records
        )
        # the same message sent now is answered
        await z.say("u2", QUESTION)
        assert "6 tháng" in z.fake.to("u2")[-1].text


async def test_stale_emergency_still_gets_the_emergency_answer(db: asyncpg.Pool) -> None:
    """A genuine message Zalo delivers late may be someone in danger: it is not handled, but triage reads it."""
    async with zalo_harness(db) as z:
        await z.choose_role("u3")
        before = await count_rows(db)
        late = z.event("u3", "bố tôi đột nhiên méo miệng, nói ngọng, yếu nửa người", msg_id="late-1")
        late["timestamp"] = str(int(time.time() * 1000) - 10 * 60 * 1000)
        response = await z.post(late)
        assert response.status_code == 200
        card = z.fake.to("u3")[-1].text
        assert "115" in card and "CẤP CỨU" in card
        assert await count_rows(db) == before  # the card only: nothing handled, nothing stored
