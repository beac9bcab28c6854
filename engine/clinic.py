"""The clinic's own facts in one place: name, phone, address, hours, booking link, prices and services.

``ClinicProfile`` is built once from settings (``CLINIC_NAME``, ``CLINIC_PHONE``, ``CLINIC_ADDRESS``,
``CLINIC_HOURS``, ``BOOKING_URL``) and an optional ``clinic.toml`` (``CLINIC_FILE``) for what does not fit in
one variable: a price list, insurance, services. Every line that tells a patient how to reach the clinic is
written here (the service intents, the emergency answer's phone line, "ask the doctor directly"), so they all
say the same thing, and none claims more than is configured: with no phone and no link the bot says plainly
that it cannot book and asks the patient to contact the clinic directly.

``clinic.toml``::

    name = "Nha khoa Ánh Dương"          # the same keys as the settings; a setting wins over the file
    insurance = "Nhận BHYT cho khám và điều trị răng cơ bản; bảo hiểm tư nhân theo danh sách tại quầy."
    services = ["Khám và tư vấn", "Lấy cao răng", "Niềng răng", "Cấy ghép implant"]

    [prices]                              # service = price, shown as written
    "Khám và tư vấn" = "miễn phí"
    "Lấy cao răng" = "200.000 – 400.000 đ"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.text import fold_plain

DEFAULT_NAME = "phòng khám"


@dataclass(frozen=True, slots=True)
class ClinicProfile:
    name: str = ""
    phone: str = ""
    address: str = ""
    hours: str = ""
    booking_url: str = ""
    insurance: str = ""
    services: tuple[str, ...] = ()
    prices: tuple[tuple[str, str], ...] = field(default=())

    @property
    def display_name(self) -> str:
        return self.name or DEFAULT_NAME

    @property
    def reachable(self) -> bool:
        """Whether the bot can tell a patient how to reach the clinic (a phone or a booking link)."""
        return bool(self.phone or self.booking_url)

    def call_line(self) -> str:
        """The call line: "gọi <name> qua số <phone>" or, with no phone, "liên hệ trực tiếp với <name>"."""
        if self.phone:
            return f"gọi {self.display_name} qua số {self.phone}"
        return f"liên hệ trực tiếp với {self.display_name}"

    def hours_note(self) -> str:
        return f" (giờ làm việc: {self.hours})" if self.hours else ""

    def ask_doctor_line(self) -> str:
        """The "ask the doctor directly" sentence, carrying the number when there is one."""
        if self.phone:
            return f"Bạn có thể hỏi trực tiếp bác sĩ bằng cách gọi {self.display_name} qua số {self.phone}."
        return "Bạn có thể hỏi trực tiếp bác sĩ khi đến khám."

    def booking_hint(self) -> str:
        """A short booking clause for closing lines: "" when nothing is configured."""
        if self.booking_url and self.phone:
            return f" (đặt lịch tại {self.booking_url} hoặc gọi {self.phone})"
        if self.booking_url:
            return f" (đặt lịch tại {self.booking_url})"
        if self.phone:
            return f" (gọi {self.phone} để đặt lịch)"
        return ""

    def prices_for(self, text: str) -> list[tuple[str, str]]:
        """The price rows whose service is named in ``text`` (folded match), else every row."""
        folded = fold_plain(text)
        named = [(s, p) for s, p in self.prices if fold_plain(s) in folded]
        return named or list(self.prices)


def read_clinic_file(path: Path) -> dict[str, object]:
    """The fields of a ``clinic.toml`` (unknown keys are an error naming the file)."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    known = {"name", "phone", "address", "hours", "booking_url", "insurance", "services", "prices"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    out: dict[str, object] = {k: str(data[k]).strip() for k in known - {"services", "prices"} if k in data}
    services = data.get("services", [])
    if not isinstance(services, list):
        raise ValueError(f"{path}: services must be a list of strings")
    out["services"] = tuple(str(s).strip() for s in services if str(s).strip())
    prices = data.get("prices", {})
    if not isinstance(prices, dict):
        raise ValueError(f"{path}: [prices] must be a table of service = price")
    out["prices"] = tuple((str(k).strip(), str(v).strip()) for k, v in prices.items())
    return out


def build_profile(file: Path | None = None, **settings: str | None) -> ClinicProfile:
    """The profile from the optional file, then the settings given (non-empty ones win)."""
    profile = ClinicProfile()
    if file is not None:
        profile = replace(profile, **read_clinic_file(file))  # type: ignore[arg-type]
    given = {k: v.strip() for k, v in settings.items() if v and v.strip()}
    return replace(profile, **given)  # type: ignore[arg-type]
