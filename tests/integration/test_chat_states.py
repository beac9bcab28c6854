"""What a chat waits for (``db.chat_states.PgStateStorage``, aiogram's FSM storage on PostgreSQL): state and
data survive a new storage (a restarted process), button slots are taken once and only with their token."""

from __future__ import annotations

import time

import asyncpg
from aiogram.fsm.storage.base import StorageKey

from bot.telegram.states import Waiting
from db import chat_states
from db.chat_states import PgStateStorage, new_slot

KEY = StorageKey(bot_id=1, chat_id=555, user_id=555)
OTHER = StorageKey(bot_id=1, chat_id=556, user_id=556)


async def test_state_and_data_survive_a_restart(db: asyncpg.Pool) -> None:
    storage = PgStateStorage(db)
    assert await storage.get_state(KEY) is None and await storage.get_data(KEY) == {}
    await storage.set_state(KEY, Waiting.article)
    await storage.update_data(KEY, {"session": 7})
    await storage.update_data(KEY, {"prompts": {"10": 3}})  # merged, not replaced
    restarted = PgStateStorage(db)
    assert await restarted.get_state(KEY) == "Waiting:article"
    assert await restarted.get_data(KEY) == {"session": 7, "prompts": {"10": 3}}
    assert await restarted.get_state(OTHER) is None  # another chat waits for nothing
    await restarted.set_state(KEY, None)
    assert await storage.get_state(KEY) is None and (await storage.get_data(KEY))["session"] == 7


async def test_a_slot_is_taken_once_with_its_token_and_expires(db: asyncpg.Pool) -> None:
    storage = PgStateStorage(db)
    await storage.set_data(KEY, {"import:41": new_slot(41, name="kb.xlsx"), "session": 2})
    assert await storage.take_slot(KEY, "import:41", 42) is None  # a forged token
    assert await storage.take_slot(OTHER, "import:41", 41) is None  # another chat's tap
    slot = await storage.take_slot(KEY, "import:41", 41)
    assert slot is not None and slot["name"] == "kb.xlsx"
    assert await storage.take_slot(KEY, "import:41", 41) is None  # a doubled tap
    assert await storage.get_data(KEY) == {"session": 2}
    old = {**new_slot(9, name="old.csv"), "at": time.time() - chat_states.SLOT_TTL - 1}
    await storage.update_data(KEY, {"import:9": old})
    assert await storage.take_slot(KEY, "import:9", 9) is None  # older than a day


async def test_idle_states_are_forgotten(db: asyncpg.Pool) -> None:
    storage = PgStateStorage(db)
    await storage.set_state(KEY, Waiting.guideline)
    await storage.set_state(OTHER, Waiting.article)
    await db.execute("UPDATE chat_states SET updated_at = now() - interval '31 days' WHERE chat_id = 555")
    assert await chat_states.delete_idle(db) == 1
    assert await storage.get_state(KEY) is None and await storage.get_state(OTHER) == "Waiting:article"
