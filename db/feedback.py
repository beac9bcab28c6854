"""👍/👎 feedback on bot answers."""

from __future__ import annotations

from db.conversations import STAFF_REPLY
from db.types import Executor


async def record(db: Executor, user_id: int, message_id: int, rating: int) -> bool:
    """Store (or change) the user's rating of one of the bot's answers to them; False if the message is not
    theirs or is not the bot's (a staff member's reply relayed during a handoff is not rated: the buttons are
    never shown under one, and a forged tap must not count it as the bot's)."""
    status = await db.execute(
        """
        INSERT INTO feedback (user_id, message_id, rating)
        SELECT $1, id, $3 FROM messages WHERE id = $2 AND user_id = $1 AND direction = 'out'
              AND input_type IS DISTINCT FROM $4
        ON CONFLICT (message_id, user_id) DO UPDATE SET rating = EXCLUDED.rating, created_at = now()
        """,
        user_id,
        message_id,
        rating,
        STAFF_REPLY,
    )
    return status.endswith(" 1")
