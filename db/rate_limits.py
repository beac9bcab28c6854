"""Fair-use counters (migration 0013): messages per sender per minute and per day, LLM calls per day.

One row per sender (channel + the channel's user id), no words. :func:`count_message` is the one statement a
counted message costs: it counts the message and returns the verdict, atomically (``INSERT … ON CONFLICT DO
UPDATE`` on the sender's row, so two processes handling the same sender cannot both take the last place).

* The minute window starts with the first message after the previous window ended and lasts one minute;
  every message in it counts, refused ones too, so a sender who keeps sending is answered again as soon as a
  new window starts.
* The day is the calendar day in Vietnam (``DAY_TIMEZONE``): ``day_count`` counts the messages admitted that
  day, ``day_refused`` those refused because the day's limit was reached.
* A limit of 0 means no limit.

The caller turns the returned counts into a notice sent once per window (``bot/fair_use.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from db.types import Executor

DAY_TIMEZONE = "Asia/Ho_Chi_Minh"  # the clinics' day: counts reset at midnight, Vietnam time


def _today(tz: str) -> str:
    """Today's date in the clinics' timezone, given as the statement's parameter ``tz`` ("$5")."""
    return f"(now() AT TIME ZONE {tz})::date"


_IN_WINDOW = "r.minute_start > now() - interval '1 minute'"
_MINUTE_COUNT = f"CASE WHEN {_IN_WINDOW} THEN r.minute_count + 1 ELSE 1 END"  # this message included
_ADMITTED_TODAY = "CASE WHEN r.day = EXCLUDED.day THEN r.day_count ELSE 0 END"  # before this message
_MINUTE_OK = f"($3 = 0 OR {_MINUTE_COUNT} <= $3)"
_DAY_OK = f"($4 = 0 OR {_ADMITTED_TODAY} < $4)"

_COUNT_MESSAGE = f"""
INSERT INTO rate_counters AS r (channel, external_id, minute_start, minute_count, day, day_count)
VALUES ($1, $2, now(), 1, {_today("$5")}, 1)
ON CONFLICT (channel, external_id) DO UPDATE SET
    minute_start = CASE WHEN {_IN_WINDOW} THEN r.minute_start ELSE now() END,
    minute_count = {_MINUTE_COUNT},
    day = EXCLUDED.day,
    day_count = {_ADMITTED_TODAY} + CASE WHEN {_MINUTE_OK} AND {_DAY_OK} THEN 1 ELSE 0 END,
    day_refused = CASE WHEN r.day = EXCLUDED.day THEN r.day_refused ELSE 0 END
                  + CASE WHEN {_DAY_OK} THEN 0 ELSE 1 END,
    admitted = {_MINUTE_OK} AND {_DAY_OK}
RETURNING admitted, minute_count, day_count, day_refused
"""


@dataclass(frozen=True, slots=True)
class Count:
    """The sender's counts after one message, and whether that message is to be answered."""

    admitted: bool
    minute_count: int  # messages in the current minute window, this one included (refused ones too)
    day_count: int  # messages admitted today
    day_refused: int  # messages refused today because the day's limit was reached, this one included


async def count_message(db: Executor, channel: str, external_id: str, per_minute: int, per_day: int) -> Count:
    """Count one message of a sender against ``per_minute`` and ``per_day`` (0: no limit); one statement.

    The first message of a sender is always admitted (a limit is either 0 or at least 1)."""
    row = await db.fetchrow(_COUNT_MESSAGE, channel, str(external_id), per_minute, per_day, DAY_TIMEZONE)
    assert row is not None
    return Count(row["admitted"], row["minute_count"], row["day_count"], row["day_refused"])


async def llm_calls_today(db: Executor, channel: str, external_id: str) -> int:
    """LLM requests made today for this sender's messages."""
    value = await db.fetchval(
        f"SELECT llm_calls FROM rate_counters WHERE channel = $1 AND external_id = $2 AND llm_day = {_today('$3')}",
        channel,
        str(external_id),
        DAY_TIMEZONE,
    )
    return int(value or 0)


async def add_llm_calls(db: Executor, channel: str, external_id: str, calls: int) -> int:
    """Add ``calls`` LLM requests to the sender's day; returns today's total."""
    value = await db.fetchval(
        f"""
        INSERT INTO rate_counters AS r (channel, external_id, minute_start, day, llm_day, llm_calls)
        VALUES ($1, $2, now(), {_today("$4")}, {_today("$4")}, $3)
        ON CONFLICT (channel, external_id) DO UPDATE SET
            llm_calls = CASE WHEN r.llm_day = EXCLUDED.llm_day THEN r.llm_calls + $3 ELSE $3 END,
            llm_day = EXCLUDED.llm_day
        RETURNING llm_calls
        """,
        channel,
        str(external_id),
        calls,
        DAY_TIMEZONE,
    )
    return int(value)


async def delete_stale(db: Executor) -> int:
    """Rows whose message day and LLM day are both over (before today, Vietnam time)."""
    status = await db.execute(
        """
        DELETE FROM rate_counters
        WHERE day < {today} AND (llm_day IS NULL OR llm_day < {today})
        """.format(today=_today("$1")),
        DAY_TIMEZONE,
    )
    return int(status.split()[-1])
