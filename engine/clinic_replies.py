"""What the bot says to a message about the clinic rather than about health (``engine.intents``).

Every reply is honest about what a chat bot can do: it never books, calls, forwards or records anything, so
it never says it did. It gives the patient the way to do it themselves with exactly the clinic facts that are
configured (``engine.clinic.ClinicProfile``), and says plainly when one is missing instead of inventing it.
"""

from __future__ import annotations

from engine.clinic import ClinicProfile


def _reach(profile: ClinicProfile, purpose: str) -> str:
    """Text such as "bạn vui lòng gọi <name> qua số <phone> (giờ làm việc: …) <purpose>" or a plain "contact them"."""
    if profile.phone:
        return (
            f"bạn vui lòng gọi {profile.display_name} qua số {profile.phone}{profile.hours_note()} {purpose}"
        )
    return f"bạn vui lòng liên hệ trực tiếp quầy lễ tân của {profile.display_name} {purpose}"


def booking(profile: ClinicProfile) -> str:
    lead = "Mình là trợ lý tự động nên chưa tự đặt lịch được cho bạn."
    if profile.booking_url and profile.phone:
        how = (
            f"Bạn có thể đặt lịch khám tại {profile.booking_url}, hoặc gọi {profile.display_name} qua số "
            f"{profile.phone}{profile.hours_note()} để được xếp lịch nhé."
        )
    elif profile.booking_url:
        how = f"Bạn có thể tự đặt lịch khám tại {profile.booking_url}{profile.hours_note()} nhé."
    else:
        how = _reach(profile, "để đặt lịch nhé.")
        how = how[0].upper() + how[1:]
    tail = "Trong lúc chờ khám, nếu có thắc mắc về triệu chứng hay cách chăm sóc, bạn cứ hỏi mình."
    return f"{lead} {how}\n\n{tail}"


def human(profile: ClinicProfile) -> str:
    lead = (
        f"Mình là trợ lý tự động của {profile.display_name} và hiện chưa chuyển được cuộc trò chuyện này "
        "cho nhân viên."
    )
    how = "Để nói chuyện với bác sĩ hoặc nhân viên, " + _reach(profile, "nhé.")
    return f"{lead} {how}\n\nNếu đang có dấu hiệu cấp cứu, hãy gọi ngay 115."


def complaint(profile: ClinicProfile) -> str:
    lead = "Mình rất tiếc vì trải nghiệm chưa tốt của bạn, và thành thật xin lỗi bạn."
    how = (
        "Mình là trợ lý tự động nên không tự giải quyết được việc này; để phòng khám nắm được và xử lý, "
        + _reach(profile, "để phản ánh nhé.")
    )
    return f"{lead} {how}"


def praise(profile: ClinicProfile) -> str:
    return "Cảm ơn bạn đã dành lời khen! Mình rất vui khi giúp được bạn. Khi cần, bạn cứ nhắn cho mình nhé."


def thanks(profile: ClinicProfile) -> str:
    return "Không có gì ạ! Chúc bạn nhiều sức khỏe. Khi cần, bạn cứ nhắn cho mình nhé."


def goodbye(profile: ClinicProfile) -> str:
    return "Tạm biệt bạn, chúc bạn nhiều sức khỏe! Khi cần, bạn cứ nhắn cho mình nhé."


def english(profile: ClinicProfile) -> str:
    who = profile.name or "the clinic"
    if profile.phone:
        how = f"For help in English, please call {who} at {profile.phone}."
    else:
        how = f"For help in English, please contact {who} directly."
    return f"Hello! I am {who}'s automated assistant and I can only answer in Vietnamese. {how}"


def _missing(profile: ClinicProfile, what: str) -> str:
    ask = _reach(profile, "để được giải đáp nhé.")
    return f"Mình chưa có thông tin về {what} của {profile.display_name}, nên không muốn trả lời đoán; {ask}"


def _overview(profile: ClinicProfile) -> str:
    facts = [
        f"• Địa chỉ: {profile.address}" if profile.address else "",
        f"• Giờ làm việc: {profile.hours}" if profile.hours else "",
        f"• Điện thoại: {profile.phone}" if profile.phone else "",
        f"• Đặt lịch: {profile.booking_url}" if profile.booking_url else "",
    ]
    facts = [f for f in facts if f]
    if not facts:
        return _missing(profile, "địa chỉ, giờ làm việc và số điện thoại")
    return f"Thông tin của {profile.display_name}:\n" + "\n".join(facts)


def clinic_info(profile: ClinicProfile, topic: str | None, text: str) -> str:
    """The fact asked for (``engine.intents.clinic_topic``), or what the profile knows when unclear."""
    name = profile.display_name
    if topic == "hours":
        if not profile.hours:
            return _missing(profile, "giờ làm việc")
        return f"Giờ làm việc của {name}: {profile.hours}."
    if topic == "address":
        if not profile.address:
            return _missing(profile, "địa chỉ")
        return f"Địa chỉ của {name}: {profile.address}." + (
            f" Giờ làm việc: {profile.hours}." if profile.hours else ""
        )
    if topic == "phone":
        if not profile.phone:
            return (
                _missing(profile, "số điện thoại")
                if not profile.booking_url
                else (
                    f"Mình chưa có số điện thoại của {name}; bạn có thể đặt lịch tại {profile.booking_url}."
                )
            )
        return f"Số điện thoại của {name}: {profile.phone}{profile.hours_note()}."
    if topic == "prices":
        rows = profile.prices_for(text)
        if not rows:
            return _missing(profile, "giá dịch vụ")
        lines = "\n".join(f"• {service}: {price}" for service, price in rows)
        return (
            f"Giá tham khảo tại {name}:\n{lines}\n\nChi phí thực tế tùy tình trạng của bạn sau khi bác sĩ khám; "
            + _reach(profile, "để được báo giá cụ thể.")
        )
    if topic == "insurance":
        if not profile.insurance:
            return _missing(profile, "bảo hiểm")
        return f"Về bảo hiểm tại {name}: {profile.insurance}"
    if topic == "services":
        if not profile.services:
            return _missing(profile, "các dịch vụ")
        return f"{name[0].upper() + name[1:]} có các dịch vụ:\n" + "\n".join(
            f"• {s}" for s in profile.services
        )
    return _overview(profile)


REPLIES = {
    "booking": booking,
    "human": human,
    "complaint": complaint,
    "praise": praise,
    "thanks": thanks,
    "goodbye": goodbye,
    "english": english,
}
