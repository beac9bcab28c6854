"""Every sentence the engine itself writes to a patient or clinician, in one place (Vietnamese).

What the flow's nodes say around the KB's own answers: the honest "no match" replies, the topic lists'
introductions, the short replies to thanks and to personal information, the input errors, the source line
under an answer and the apology when the flow fails. Placeholders are ``str.format`` fields.

Elsewhere by design: a role's greeting and answer introductions are data (``engine/data/roles.toml``), the
replies about the clinic are built from its profile (``engine.clinic_replies``), the emergency answers are
the triage's (``engine.triage``), and the LLM prompts (English instructions) are ``engine.prompts``.
"""

from __future__ import annotations

# ----- input (engine.safety) ----------------------------------------------------------------------------------

EMPTY_INPUT = "Tin nhắn đang trống. Bạn hãy gõ câu hỏi của mình (tối đa 1000 ký tự) nhé."
TOO_LONG = (
    "Tin nhắn dài {length} ký tự, vượt quá giới hạn {limit} ký tự. "
    "Bạn vui lòng rút gọn hoặc tách thành vài câu hỏi ngắn hơn nhé."
)

# ----- replies (engine.reply_nodes) ---------------------------------------------------------------------------

CLARIFY = (
    "Mình chưa tìm thấy nội dung thật sự khớp với câu hỏi của bạn trong tài liệu của phòng khám, "
    "nên không muốn trả lời đoán. Có phải bạn muốn hỏi một trong những câu dưới đây không? "
    "Bạn cũng có thể hỏi lại chi tiết hơn (triệu chứng, thời gian, tuổi…)."
)
TOPIC_QUESTIONS = "Các câu hỏi về “{topic}” mình có thể trả lời, bạn chọn câu muốn xem nhé:"
# A clinician role is addressed as "bác sĩ" by a "tôi" (its greeting in roles.toml), and is never told to phone
# the clinic to ask a doctor: each reply below has its clinician form.
CLARIFY_CLINICIAN = (
    "Tôi chưa tìm thấy nội dung thật sự khớp với câu hỏi trong tài liệu của phòng khám, nên không trả lời đoán. "
    "Có phải bác sĩ muốn tra cứu một trong những câu dưới đây không? Bác sĩ cũng có thể hỏi cụ thể hơn "
    "(tình huống lâm sàng, thuốc, chỉ số…)."
)
TOPIC_QUESTIONS_CLINICIAN = "Các câu hỏi về “{topic}” tôi có thể tra cứu, bác sĩ chọn câu muốn xem:"
NO_MATCH = (
    "Rất tiếc, tài liệu của phòng khám hiện chưa có nội dung phù hợp với câu hỏi này, "
    "nên mình không thể trả lời chắc chắn. {ask} Bạn cũng có thể xem các chủ đề mình đang hỗ trợ:"
)
NO_MATCH_CLINICIAN = (
    "Tài liệu của phòng khám hiện chưa có nội dung phù hợp với câu hỏi này, nên tôi không trả lời đoán. "
    "Bác sĩ có thể xem các chủ đề tôi tra cứu được:"
)
# No match (or a clarify) in this role's KB, but another role's KB answers it: say so, never switch silently
# (the channel shows the SWITCH_BUTTON; pressing it switches and answers the same message there).
SECTION_OFFER = "Câu hỏi này có vẻ thuộc mục {section}. Bạn có muốn chuyển sang mục đó để mình trả lời không?"
SECTION_OFFER_CLINICIAN = (
    "Câu hỏi này có vẻ thuộc mục {section}. Bác sĩ có muốn chuyển sang mục đó để tôi tra cứu không?"
)
OTHER_SECTION = (
    "Rất tiếc, tài liệu mục {current} hiện chưa có nội dung phù hợp với câu hỏi này. " + SECTION_OFFER
)
OTHER_SECTION_CLINICIAN = (
    "Tài liệu mục {current} hiện chưa có nội dung phù hợp với câu hỏi này. " + SECTION_OFFER_CLINICIAN
)
# A clarify (close entries here, none sure) whose message another role's KB answers better: the offer first,
# then this role's list under it (the user may still have meant one of them).
CLARIFY_HERE = "Còn nếu bạn muốn hỏi trong mục {current}, có phải là một trong những câu dưới đây không?"
CLARIFY_HERE_CLINICIAN = (
    "Còn nếu bác sĩ muốn tra cứu trong mục {current}, có phải là một trong những câu dưới đây không?"
)
OTHER_SECTION_TOPICS = "Hoặc xem các chủ đề của mục {current}:"
SWITCH_BUTTON = "Chuyển sang mục {section}"
NOT_UNDERSTOOD = "Xin lỗi, mình chưa hiểu ý bạn. Bạn có thể hỏi về một trong các chủ đề sau:"
NOT_UNDERSTOOD_CLINICIAN = (
    "Xin lỗi, tôi chưa hiểu câu hỏi. Bác sĩ có thể tra cứu theo một trong các chủ đề sau:"
)
START_WITH_TOPICS = "Bạn có thể bắt đầu với một trong các chủ đề sau:"
START_WITH_TOPICS_CLINICIAN = "Bác sĩ có thể bắt đầu với một trong các chủ đề sau:"
TOPICS = "Đây là các chủ đề bạn có thể hỏi (bấm vào một chủ đề để xem các câu hỏi):"
TOPICS_CLINICIAN = "Đây là các chủ đề bác sĩ có thể tra cứu (bấm vào một chủ đề để xem các câu hỏi):"
NO_TOPICS = " (Hiện chưa có dữ liệu chủ đề cho chuyên khoa này.)"  # after an introduction, its colon dropped
OTHER_TOPIC = "Khác"  # the topic of entries that have none
THANKS_REPLY = "Không có gì ạ! Chúc bạn nhiều sức khỏe. Khi cần, bạn cứ nhắn cho mình nhé."
THANKS_REPLY_CLINICIAN = "Không có gì ạ. Khi cần tra cứu, bác sĩ cứ nhắn cho tôi."
GOODBYE_REPLY_CLINICIAN = "Chào bác sĩ. Khi cần tra cứu, bác sĩ cứ nhắn cho tôi."
# Memory keeps the last few turns only: the bot does not claim to have "noted" anything.
STATEMENT_REPLY = "Cảm ơn bạn đã chia sẻ. Bạn muốn hỏi thêm điều gì? Ví dụ:"
STATEMENT_REPLY_CLINICIAN = "Cảm ơn bác sĩ đã cho biết. Bác sĩ muốn tra cứu điều gì? Ví dụ:"

# ----- the source line under an answer from the KB (engine.answers) ------------------------------------------

SOURCE_CODES = "📚 Mã tham khảo: {codes}"  # clinicians look entries up by code
SOURCE = "📚 Nguồn: {where}."
SOURCE_SAMPLE = "tài liệu mẫu của MedBot"
SOURCE_CLINIC = "tài liệu hỏi đáp của phòng khám"
SOURCE_TOPICS = ", mục {topics}"
TOPIC_QUOTED = "“{topic}”"

# ----- the flow failed (engine.flows) ---------------------------------------------------------------------------

APOLOGY = "Xin lỗi, hệ thống đang gặp sự cố nên chưa trả lời được. Bạn vui lòng thử lại sau ít phút nhé."
