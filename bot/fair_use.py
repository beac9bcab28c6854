"""Fair use: how many messages a sender gets answered, and how many LLM requests their messages may make.

The rules (applied by ``ChatService.admit`` and ``ChatService.handle_text``, on Telegram and Zalo; the console
is the operator's own machine and is never limited):

* **Messages**: at most ``RATE_LIMIT_PER_MINUTE`` (20) a minute and ``RATE_LIMIT_PER_DAY`` (200) a day per
  sender (0: no limit). Counted: every message and button tap that reaches the bot's handling (Telegram
  messages and callback queries, Zalo ``user_send_*`` events; Zalo follow / unfollow are not). A message over
  a limit is not answered; the first one over it in a window gets a polite notice (when they may write again,
  how to reach the clinic, 115 for an emergency) and the rest of that window get nothing, so the notice is
  not repeated to someone who keeps sending. The minute window is one minute from the first message after the
  previous window; the day is the calendar day in Vietnam.
* **Emergencies are always answered and never counted**: the triage guard runs before the limit on every
  path (``ChatService.guard``; Telegram's ``TriageMiddleware``, the Zalo webhook), the emergency answer goes
  out from the text alone, and a message triage recognises as an emergency neither counts against the
  sender nor is refused.
* **Clinic staff** (``bot.access.StaffRule``: ``ADMIN_IDS``, ``CLINICIAN_IDS``, the database admin flag) are
  exempt from both limits: they are known people, and an admin importing the KB or a doctor testing answers
  must never be cut off.
* **LLM budget**: with an LLM configured, each sender's messages may make ``LLM_DAILY_CALLS_PER_USER`` (100)
  LLM requests a day (every request the server answered counts: classify, prune, compose, and retries; 0: no
  budget). Once today's calls reach it, their messages are answered by the offline path (the same flow run
  with ``llm_allowed`` False), which answers every question the KB answers; the budget is checked before each
  message, so the message that crosses it still finishes with the LLM.

Counters live in PostgreSQL (``db.rate_limits``, one statement per counted message), so the limits hold
across any number of web processes. They are keyed by the channel's user id and hold no words; erasing one's
data (``/xoadulieu``) does not reset them, and the worker's clean-up deletes them once their day is over.
"""

from __future__ import annotations

from dataclasses import dataclass

from db import rate_limits
from db.settings import Settings
from db.types import Executor
from db.users import User
from engine import ClinicProfile

EMERGENCY_LINE = "Nếu là trường hợp cấp cứu, hãy gọi ngay 115."
MINUTE_NOTICE = (
    "Bạn đang gửi tin nhắn hơi nhanh 🙏 Mình chỉ trả lời được tối đa {limit} tin nhắn mỗi phút, nên tin nhắn "
    "vừa rồi chưa được trả lời. Bạn vui lòng đợi khoảng một phút rồi gửi lại giúp mình nhé.\n\n"
    + EMERGENCY_LINE
)
DAY_NOTICE = (
    "Hôm nay bạn đã nhắn {limit} tin, là mức tối đa mình trả lời được trong một ngày 🙏 Các tin nhắn tiếp theo "
    "trong hôm nay sẽ chưa được trả lời, mình sẽ tiếp tục trả lời bạn từ ngày mai. Nếu cần tư vấn ngay, bạn "
    "vui lòng {call}.\n\n" + EMERGENCY_LINE
)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-sender limits; 0 means none."""

    per_minute: int = 20
    per_day: int = 200
    llm_calls_per_day: int = 100

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The configured limits; no LLM budget without an LLM (nothing to count)."""
        llm_calls = settings.llm_daily_calls_per_user if settings.llm_enabled else 0
        return cls(settings.rate_limit_per_minute, settings.rate_limit_per_day, llm_calls)

    @property
    def messages_limited(self) -> bool:
        return self.per_minute > 0 or self.per_day > 0


@dataclass(frozen=True, slots=True)
class Admission:
    """Whether a message is answered; when it is not, ``notice`` is what to tell the sender (None: nothing,
    they were told already in this window)."""

    admitted: bool
    notice: str | None = None


ADMITTED = Admission(True)


class FairUse:
    """The counting side of the rules above, on one executor (the chat lock's connection or the pool)."""

    def __init__(self, limits: Limits, clinic: ClinicProfile | None = None) -> None:
        self.limits = limits
        self.clinic = clinic or ClinicProfile()

    async def admit(self, db: Executor, user: User) -> Admission:
        """Count one message of ``user`` and say whether it is answered (one statement)."""
        limits = self.limits
        if not limits.messages_limited:
            return ADMITTED
        count = await rate_limits.count_message(
            db, user.channel, user.external_id, limits.per_minute, limits.per_day
        )
        if count.admitted:
            return ADMITTED
        return Admission(False, self.notice(count))

    def notice(self, count: rate_limits.Count) -> str | None:
        """The notice for a refused message: the first refusal of the day's window, else the first of the
        minute's (not while the day's limit holds), else none."""
        if count.day_refused == 1:
            return DAY_NOTICE.format(limit=self.limits.per_day, call=self.clinic.call_line())
        if count.day_refused == 0 and count.minute_count == self.limits.per_minute + 1:
            return MINUTE_NOTICE.format(limit=self.limits.per_minute)
        return None

    @property
    def budgets_llm(self) -> bool:
        return self.limits.llm_calls_per_day > 0

    async def llm_allowed(self, db: Executor, user: User) -> bool:
        """Whether ``user``'s next message may use the LLM (today's calls below the budget)."""
        budget = self.limits.llm_calls_per_day
        if budget <= 0:
            return True
        return await rate_limits.llm_calls_today(db, user.channel, user.external_id) < budget

    async def spent(self, db: Executor, user: User, calls: int) -> None:
        """Record ``calls`` LLM requests made for one of ``user``'s messages."""
        if calls > 0 and self.limits.llm_calls_per_day > 0:
            await rate_limits.add_llm_calls(db, user.channel, user.external_id, calls)
