"""What a Telegram chat waits for: the one mechanism (aiogram FSM on ``db.chat_states.PgStateStorage``).

States say what the chat's next message is:

* ``Waiting.article`` — after /verify: the next text or file is an article to verify;
* ``Waiting.guideline`` — after /guideline: the next file is a guideline document;
* ``Waiting.sentence`` — a verification session is open (``data["session"]``): typed text is new search
  keywords or guidance for its current sentence;
* ``Waiting.kb_answer`` — after ✍️ on /unanswered: the admin's answer to one of the prompts
  (``data["prompts"]``: the bot's prompt message id → the patient message it asks about).

Button taps use single-use data slots instead (``db.chat_states.take_slot``): ``IMPORT`` (a checked KB file
awaiting its decision) and ``KB_DRAFT`` (an answer awaiting "use the patient's wording?"). Each set of
buttons gets its own slot (``<kind>:<token>``) and the token is in the buttons' callback data, so only the
buttons that came with a slot can take it, once, within ``db.chat_states.SLOT_TTL``.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup

from db.chat_states import SLOT_TTL, PgStateStorage, new_slot

IMPORT = "import"
KB_DRAFT = "kb_draft"
PROMPTS_KEPT = 20  # answer prompts remembered per chat (the oldest are forgotten)


class Waiting(StatesGroup):
    article = State()
    guideline = State()
    sentence = State()
    kb_answer = State()


async def put_slot(state: FSMContext, kind: str, **values: Any) -> int:
    """Store a pending action for the buttons about to be sent; returns the token they must carry.
    Expired slots of the chat are dropped on the way."""
    token = secrets.randbelow(2**53) + 1
    cutoff = time.time() - SLOT_TTL
    data = {
        k: v
        for k, v in (await state.get_data()).items()
        if not (isinstance(v, dict) and "token" in v and v.get("at", 0) < cutoff)
    }
    data[f"{kind}:{token}"] = new_slot(token, **values)
    await state.set_data(data)
    return token


async def take_slot(state: FSMContext, kind: str, token: int) -> dict[str, Any] | None:
    """The pending action of a tapped button, once (None when stale, forged or already taken)."""
    storage = state.storage
    assert isinstance(storage, PgStateStorage), "the dispatcher runs on PgStateStorage"
    return await storage.take_slot(state.key, f"{kind}:{token}", token)


async def remember_prompt(state: FSMContext, prompt_id: int, message_id: int) -> None:
    """The bot sent answer prompt ``prompt_id`` about patient message ``message_id``: replies to it are the
    admin's answer (``Waiting.kb_answer``)."""
    prompts: dict[str, int] = dict((await state.get_data()).get("prompts") or {})
    prompts[str(prompt_id)] = message_id
    await state.update_data(prompts=dict(list(prompts.items())[-PROMPTS_KEPT:]))
    await state.set_state(Waiting.kb_answer)


async def forget_prompt(state: FSMContext, prompt_id: int) -> None:
    """The prompt is answered (or its question is gone); with none left the chat goes back to what it was
    doing: the open verification sentence, if any, else nothing."""
    data = await state.get_data()
    prompts = {k: v for k, v in (data.get("prompts") or {}).items() if k != str(prompt_id)}
    await state.update_data(prompts=prompts)
    if not prompts:
        await state.set_state(Waiting.sentence if data.get("session") else None)
