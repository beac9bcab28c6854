"""👍/👎 feedback on bot answers."""

from __future__ import annotations

from db.types import Executor


async def record(db: Executor, user_id: int, message_id: int, rating: int) -> bool:
    """Store (or change) the user's rating of one of their answers; False if the message is not theirs."""
    status = await db.execute(
        """
        INSERT INTO feedback (user_id, message_id, rating)
        SELECT $1, id, $3 FROM messages WHERE id = $2 AND user_id = $1 AND direction = 'out'
        ON CONFLICT (message_id, user_id) DO UPDATE SET rating = EXCLUDED.rating, created_at = now()
        """,
        user_id,
        message_id,
        rating,
    )
    return status.endswith(" 1")
