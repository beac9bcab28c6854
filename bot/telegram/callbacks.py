"""Typed callback data for every inline button. Packed values stay far below Telegram's 64-byte limit:
buttons carry short ids (suggestion set id + index, message id, a chat state slot's token), never text.

Numbers are bounded to what their database columns hold (``DbId``: bigserial ids; ``Index``: integer
positions), so a forged or garbled value (``sq:abc:0``, ``fb:99999999999999999999:1``) fails to unpack like
any other malformed payload and is answered by the catch-all callback handler
(``bot.telegram.routers.fallback``) instead of reaching SQL."""

from __future__ import annotations

from typing import Annotated

from aiogram.filters.callback_data import CallbackData
from pydantic import Field

DbId = Annotated[int, Field(ge=1, le=2**63 - 1)]
Index = Annotated[int, Field(ge=0, le=2**31 - 1)]


class RoleCb(CallbackData, prefix="role"):
    role: str


class SuggestCb(CallbackData, prefix="sq"):
    set_id: DbId
    i: Index


class SuggestPageCb(CallbackData, prefix="sp"):
    """Another page of a long suggestion list (every topic, or one topic's questions); ``m``: the answer's
    stored message (its 👍/👎 row is kept), 0 when it has none."""

    set_id: DbId
    page: Annotated[int, Field(ge=0, le=1000)]
    m: Annotated[int, Field(ge=0, le=2**63 - 1)]


class SwitchCb(CallbackData, prefix="xr"):
    """ "Chuyển sang mục …" under a reply that offered another role (``Reply.switch_role``): ``m`` is that
    stored reply; the role it offered is read back from it server-side (``ChatService.switch_and_answer``)."""

    m: DbId


class FeedbackCb(CallbackData, prefix="fb"):
    message_id: DbId
    rating: Annotated[int, Field(ge=-1, le=1)]


class EraseCb(CallbackData, prefix="erase"):
    confirm: bool


class ImportCb(CallbackData, prefix="imp"):
    """A decision on a checked import: "ok" | "force" | "keep" | "no"; ``token``: the chat state slot
    (``db.chat_states``) the dry run left for these buttons."""

    action: str
    token: DbId


class UnansweredCb(CallbackData, prefix="ua"):
    message_id: DbId


class KbDraftCb(CallbackData, prefix="kbd"):
    """An admin's decision on the drafted KB question of an /unanswered answer: "ok" (use it) or "edit"."""

    action: str
    token: DbId


class VerifyCb(CallbackData, prefix="vf"):
    """A button under a verification sentence: ``action`` a = accept, r = search again, s = skip (not a
    claim), q = stop, c = continue an unfinished session; ``sid`` the session, ``idx`` the sentence."""

    action: str
    sid: DbId
    idx: Index


class HandoffCloseCb(CallbackData, prefix="hoc"):
    """ "Kết thúc hỗ trợ" under a handoff's summary in the staff topic: ``h`` the handoff (the staff group's
    chat id is checked server-side)."""

    h: DbId


class HandoffEndCb(CallbackData, prefix="hoe"):
    """ "Kết thúc hỗ trợ" under the patient's "a staff member answers here" message (their own open handoff)."""
