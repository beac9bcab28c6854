"""Everything a Telegram user reads, in natural Vietnamese (HTML parse mode: dynamic parts are escaped
by the caller with :func:`html.escape`)."""

from __future__ import annotations

PRIVACY = (
    "🔒 <b>Quyền riêng tư</b>: câu hỏi của bạn được lưu lại để trả lời và cải thiện chất lượng tư vấn. "
    "Bạn có thể xoá toàn bộ dữ liệu của mình bất cứ lúc nào bằng lệnh /xoadulieu."
)
WELCOME = "Xin chào {name}! 👋 Mình là <b>MedBot</b>, trợ lý hỏi đáp sức khoẻ của phòng khám."
PICK_ROLE = "Bạn muốn hỏi về chuyên khoa nào? Hãy chọn bên dưới nhé 👇"
PICK_ROLE_FIRST = "Trước khi hỏi, bạn chọn giúp mình chuyên khoa nhé 👇 Sau đó gửi lại câu hỏi là được."
ROLE_CHOSEN = (
    "✅ Đã chọn: <b>{label}</b>.\n\nBạn cứ gõ câu hỏi, có dấu hay không dấu đều được. Ví dụ: <i>{example}</i>"
)
ROLE_PRESELECTED = "Bạn đang hỏi về: <b>{label}</b>. Muốn đổi chuyên khoa, gõ /chuyenkhoa."
ROLE_UNKNOWN = "Chuyên khoa này không có sẵn, bạn chọn lại giúp mình nhé."
# Clinician roles, /verify and /guideline are for clinic staff (bot/access.py).
STAFF_ONLY_ROLE = (
    "🩺 Mục này dành riêng cho nhân viên y tế của phòng khám. "
    "Bạn vui lòng chọn một chuyên khoa dành cho bệnh nhân bên dưới nhé 👇"
)
STAFF_ONLY_ROLE_ALERT = (
    "Mục này dành riêng cho nhân viên y tế của phòng khám. Bạn vui lòng chọn chuyên khoa khác nhé."
)
STAFF_ROLE_WITHDRAWN = (
    "🩺 Chuyên khoa <b>{label}</b> dành riêng cho nhân viên y tế của phòng khám. "
    "Bạn vui lòng chọn một chuyên khoa dành cho bệnh nhân bên dưới, rồi gửi lại câu hỏi giúp mình nhé 👇"
)
STAFF_ONLY = "⛔ Chức năng này chỉ dành cho nhân viên y tế của phòng khám."
EXAMPLES = {
    "patient_dental": "Răng bị ê buốt khi uống nước lạnh thì làm sao?",
    "patient_diabetes": "Người tiểu đường nên ăn sáng như thế nào?",
}
EXAMPLE_DEFAULT = "Triệu chứng này có nguy hiểm không?"

HELP = (
    "ℹ️ <b>Cách dùng MedBot</b>\n\n"
    "• Gõ câu hỏi bằng tiếng Việt (có dấu hoặc không dấu).\n"
    "• Bấm vào các câu hỏi gợi ý để hỏi tiếp.\n"
    "• Bấm 👍 hoặc 👎 để đánh giá câu trả lời.\n\n"
    "<b>Lệnh</b>\n"
    "/start — bắt đầu lại\n"
    "/chuyenkhoa — đổi chuyên khoa\n"
    "/xoadulieu — xoá dữ liệu của bạn\n"
    "/help — hướng dẫn\n\n"
    "🚑 Khi có dấu hiệu cấp cứu, hãy gọi ngay <b>115</b>."
)
HELP_STAFF = (
    "\n\n🩺 <b>Nhân viên y tế</b>\n"
    "/verify — kiểm tra một bài viết với hướng dẫn chuyên môn\n"
    "/guideline — nhập tài liệu hướng dẫn chuyên môn"
)
HELP_ADMIN = (
    "\n\n🛠 <b>Quản trị</b>\n"
    "Gửi tệp .xlsx hoặc .csv — nhập KB (có kiểm tra trước)\n"
    "/stats — thống kê 7/30 ngày\n"
    "/unanswered — câu hỏi chưa trả lời tốt\n"
    "/kb_add — thêm một câu hỏi vào KB\n"
    "/duyetkb — xác nhận bác sĩ đã duyệt KB mẫu của một chuyên khoa\n"
    "/hoantac — hoàn tác lần nhập KB gần nhất của một chuyên khoa\n"
    "/reload — tải lại KB"
)

NOT_TEXT = "Mình chỉ đọc được tin nhắn chữ thôi 🙏 Bạn vui lòng gõ câu hỏi nhé."
UNKNOWN_COMMAND = "Mình chưa hiểu lệnh này. Gõ /help để xem hướng dẫn, hoặc cứ gõ câu hỏi của bạn nhé."
EMPTY_ANSWER = "Xin lỗi, mình chưa tìm được câu trả lời phù hợp. Bạn thử diễn đạt lại câu hỏi giúp mình nhé."
PAGE_PREV = "◀ Trước"
PAGE_NEXT = "Sau ▶"
SECTION_SWITCHED = "Đã chuyển sang: {label}"  # a toast: plain text
SUGGESTION_EXPIRED = "Câu hỏi này đã hết hạn, bạn vui lòng gõ lại câu hỏi nhé."
BUTTON_EXPIRED = "Nút này không còn dùng được nữa. Bạn vui lòng gõ lại câu hỏi hoặc lệnh nhé."
THANKS_UP = "Cảm ơn bạn đã đánh giá! 👍"
THANKS_DOWN = "Cảm ơn bạn! Mình sẽ chuyển để bác sĩ cải thiện câu trả lời. 🙏"
FEEDBACK_GONE = "Câu trả lời này không còn nữa."
ERROR = "Xin lỗi, hệ thống đang gặp trục trặc 😔 Bạn vui lòng thử lại sau ít phút nhé."

ERASE_CONFIRM = (
    "🗑 Bạn có chắc muốn xoá <b>toàn bộ</b> dữ liệu của mình (câu hỏi, câu trả lời, đánh giá)? "
    "Thao tác này không thể hoàn tác."
)
ERASE_YES = "🗑 Xoá dữ liệu"
ERASE_NO = "Huỷ"
ERASED = "✅ Đã xoá toàn bộ dữ liệu của bạn. Khi cần, gõ /start để bắt đầu lại."
ERASE_CANCELLED = "Đã huỷ, dữ liệu của bạn vẫn được giữ nguyên."

# Admin
ADMIN_ONLY = "⛔ Chức năng này chỉ dành cho quản trị viên."
ADMIN_ONLY_DOCUMENT = (
    "⛔ Chỉ quản trị viên mới gửi được tệp dữ liệu. Nếu bạn muốn hỏi, vui lòng gõ câu hỏi nhé."
)
ADMIN_PRIVATE_ONLY = (
    "🔒 Lệnh quản trị có thể hiển thị câu hỏi của bệnh nhân nên chỉ dùng được khi nhắn riêng với bot. "
    "Bạn mở cuộc trò chuyện riêng với mình rồi gửi lại lệnh nhé."
)
IMPORT_HOWTO = (
    "📥 Gửi tệp <b>.xlsx</b> hoặc <b>.csv</b> vào đây. Mình sẽ kiểm tra trước rồi mới hỏi bạn có nhập không."
)
IMPORT_BAD_TYPE = "Mình chỉ nhận tệp .xlsx hoặc .csv để nhập KB."
IMPORT_TOO_BIG = "Tệp quá lớn (tối đa {mb} MB)."
IMPORT_CHECKING = "🔎 Đang kiểm tra tệp <b>{name}</b>…"
IMPORT_CONFIRM = "✅ Nhập"
IMPORT_CANCEL = "✖️ Huỷ"
IMPORT_CANCELLED = "Đã huỷ, KB không thay đổi."
IMPORT_EXPIRED = "Yêu cầu nhập này đã hết hạn hoặc đã được xử lý."
IMPORT_STARTED = "Đang nhập…"
IMPORT_PROGRESS = "⏳ Đang nhập <b>{name}</b>: {done}/{total} dòng ({pct}%)"
IMPORT_FAILED = "❌ Nhập không thành công: {error}\nKB vẫn giữ nguyên như trước."
# A file that would hide a large share of a role: "Nhập" is replaced by a separate, explicit confirmation.
IMPORT_FORCE = "⚠️ Nhập và ẩn {n} mục"
IMPORT_KEEP = "➕ Chỉ thêm và cập nhật, không ẩn mục nào"
IMPORT_HIDE_EXPLAIN = (
    "⚠️ Tệp là toàn bộ kho kiến thức của vai trò trong tệp: các mục có mã không nằm trong tệp sẽ bị ẩn. "
    "Nếu đúng là muốn thay cả kho bằng tệp này, bấm “⚠️ Nhập và ẩn {n} mục”. Nếu chỉ muốn thêm các mục mới "
    "và cập nhật mục trùng mã, bấm “➕ Chỉ thêm và cập nhật”."
)
IMPORT_HIDE_RESEND = "Kho kiến thức đã thay đổi từ lúc kiểm tra: gửi lại tệp để xem lại và xác nhận."
IMPORT_UNDO_HINT = "↩️ Hoàn tác lần nhập này: {commands}"
# A file that would undo changes made in the clinic console (kb_import.console_changes).
IMPORT_CONSOLE_HEAD = "⚠️ Tệp này sẽ làm mất {n} thay đổi đã làm trên trang quản trị:"
IMPORT_CONSOLE_DONE_HEAD = "Lần nhập này đã ghi đè hoặc ẩn {n} mục đã thay đổi trên trang quản trị:"
IMPORT_CONSOLE_KEPT_HEAD = "🛡 Đã giữ nguyên {n} mục đã thay đổi trên trang quản trị:"
IMPORT_CONSOLE_MORE = "… và {n} mục khác"
IMPORT_CONSOLE_EXPLAIN = (
    "Bấm “🛡 Chỉ nhập các mục chưa sửa trên trang quản trị” để nhập phần còn lại của tệp và giữ nguyên các mục "
    "trên. Muốn giữ các thay đổi này trong tệp thì hãy bắt đầu tệp từ bản xuất mới nhất của kho kiến thức."
)
IMPORT_KEEP_EDITS = "🛡 Chỉ nhập các mục chưa sửa trên trang quản trị"
IMPORT_CONFIRM_UNDOING = "⚠️ Nhập cả tệp (bỏ {n} thay đổi trên trang quản trị)"
UNDO_USAGE = (
    "Cách dùng: <code>/hoantac chuyên_khoa</code>, ví dụ <code>/hoantac patient_dental</code>.\n"
    "Hoàn tác lần nhập KB gần nhất của chuyên khoa đó: các mục trở lại đúng như trước lần nhập (nội dung, "
    "ẩn/hiện, khẩn cấp), mục do lần nhập đó thêm vào sẽ được gỡ bỏ. Gõ lại lệnh để lùi thêm một lần nhập."
)
UNDO_CHOICES = "📋 Lần nhập có thể hoàn tác:\n{items}"
UNDO_CHOICE_ITEM = "• <code>/hoantac {role}</code> — {what}: {n} mục"
UNDO_NOTHING = "Chưa có lần nhập nào có thể hoàn tác."
UNDO_REDO = "Muốn làm lại lần nhập đó: gửi lại tệp."
KB_ADD_USAGE = (
    "Cách dùng: <code>/kb_add [chuyên khoa] câu hỏi | câu trả lời</code>\n"
    "Ví dụ: <code>/kb_add patient_dental Răng khôn mọc lệch có cần nhổ không? | Nên khám để chụp phim…</code>"
)
KB_ADDED = "✅ Đã thêm vào KB ({label}) với mã <code>{code}</code>."
RELOADED = "🔄 Đã yêu cầu tải lại KB cho {n} chuyên khoa; menu lệnh đã được cập nhật."
KB_REVIEWED_USAGE = (
    "Cách dùng: <code>/duyetkb chuyên_khoa</code>, ví dụ <code>/duyetkb patient_dental</code>.\n"
    "Chỉ dùng sau khi bác sĩ của phòng khám đã đọc và duyệt các câu trả lời mẫu của chuyên khoa đó: từ đó, "
    "câu trả lời sẽ không còn ghi là tài liệu mẫu chưa được duyệt."
)
KB_REVIEWED_PENDING = "📋 Chuyên khoa còn dùng tài liệu mẫu chưa được duyệt:\n{items}"
KB_REVIEWED_PENDING_ITEM = "• {label} (<code>{role}</code>): {n} mục"
KB_REVIEWED_NO_PENDING = "Không còn chuyên khoa nào dùng tài liệu mẫu chưa được duyệt."
KB_REVIEWED = (
    "✅ Đã đánh dấu {n} mục của chuyên khoa {label} là đã được bác sĩ phòng khám duyệt. Từ giờ, câu trả lời "
    "từ các mục này không còn ghi là tài liệu mẫu."
)
KB_REVIEWED_NONE = (
    "Chuyên khoa {label} không có mục nào là tài liệu mẫu chưa duyệt, nên không có gì thay đổi."
)
KB_REVIEWED_UNKNOWN = "Không tìm thấy chuyên khoa “{name}”."
UNANSWERED_NONE = "🎉 Không có câu hỏi nào cần xem lại trong 30 ngày qua."
UNANSWERED_HEAD = "📝 <b>Câu hỏi cần xem lại</b> (điểm thấp hoặc bị 👎):"
UNANSWERED_PROMPT = (
    "✍️ Trả lời câu hỏi #Q{id} ({label}):\n<code>{draft}</code>\n\n"
    "Câu hỏi trong KB sẽ được gợi ý cho người bệnh khác, nên hãy viết bằng lời của bạn: chạm vào câu trên để "
    "sao chép, sửa lại và bỏ tên, số điện thoại, chi tiết riêng của người hỏi.\n"
    "Hãy <b>trả lời (Reply)</b> tin nhắn này theo dạng <code>câu hỏi | câu trả lời</code>. Nếu bạn chỉ gửi "
    "câu trả lời, mình sẽ hỏi lại trước khi dùng nguyên văn câu trên làm câu hỏi."
)
UNANSWERED_GONE = "Không tìm thấy câu hỏi này (có thể người dùng đã xoá dữ liệu)."
UNANSWERED_EMPTY = (
    "Câu hỏi và câu trả lời đều không được để trống. Hãy trả lời lại tin nhắn ✍️ theo dạng "
    "<code>câu hỏi | câu trả lời</code>."
)
KB_DRAFT_CONFIRM = (
    "Câu hỏi sẽ được lưu vào KB <b>đúng nguyên văn tin nhắn của người hỏi</b>:\n<code>{draft}</code>\n\n"
    "Chỉ chọn “Dùng câu hỏi này” nếu bạn xác nhận đây là cách viết của bạn và trong đó không còn thông tin "
    "riêng của người hỏi. Muốn sửa thì chọn “Tự viết câu hỏi”."
)
KB_DRAFT_USE = "✅ Dùng câu hỏi này"
KB_DRAFT_EDIT = "✏️ Tự viết câu hỏi"
KB_DRAFT_REWRITE = (
    "✏️ Được. Hãy trả lời tin nhắn bên dưới theo dạng <code>câu hỏi | câu trả lời</code>. "
    "Câu trả lời bạn đã viết (chạm để sao chép):\n<code>{answer}</code>"
)
KB_DRAFT_EXPIRED = "Yêu cầu này đã hết hạn hoặc đã được xử lý."
STATS_CAPTION = "📊 Tin nhắn mỗi ngày trong 30 ngày qua"

# -- clinician verification (/verify, /guideline: bot/telegram/routers/verify.py) ---------------------------
VERIFY_ASK_ARTICLE = (
    "📝 Hãy gửi bài viết cần kiểm tra: dán văn bản vào đây, hoặc gửi tệp .txt, .md, .docx.\n"
    "Bot sẽ đối chiếu từng câu với hướng dẫn chuyên môn của phòng khám."
)
VERIFY_OPEN_SESSION = "\n\nBạn còn phiên kiểm tra “{title}” đang dở."
VERIFY_RESUME = "▶️ Tiếp tục phiên đang dở"
VERIFY_ASK_GUIDELINE = (
    "📚 Gửi tệp hướng dẫn chuyên môn (.md, .txt, .docx hoặc .pdf) để nhập vào kho đối chiếu."
)
VERIFY_FILE_TOO_BIG = "Tệp quá lớn (tối đa {mb} MB)."
VERIFY_GUIDELINE_TYPES = "Định dạng chưa hỗ trợ. Hãy gửi tệp .md, .txt, .docx hoặc .pdf."
VERIFY_ARTICLE_TYPES = "Định dạng chưa hỗ trợ. Hãy gửi tệp .txt, .md, .docx hoặc dán văn bản."
VERIFY_GUIDELINE_AS_FILE = "Hãy gửi hướng dẫn dưới dạng tệp (.md, .txt, .docx hoặc .pdf)."
VERIFY_UNREADABLE = "Không đọc được bài viết: {error}. Hãy gửi lại."
VERIFY_NO_CLAIMS = "Bài viết không có câu nào để kiểm tra. Hãy gửi lại."
VERIFY_STARTED = "Bắt đầu kiểm tra “{title}”: {n} câu."
VERIFY_SESSION_INVALID = "Phiên kiểm tra không còn hiệu lực."
VERIFY_SESSION_ENDED = "Phiên kiểm tra này đã kết thúc."
VERIFY_ACCEPT = "✅ Chấp nhận, câu tiếp"
VERIFY_RESEARCH = "🔁 Tìm lại"
VERIFY_SKIP = "⏭ Bỏ qua (không phải nhận định)"
VERIFY_STOP = "⏹ Dừng"
VERIFY_REPORT_MD = "Báo cáo chi tiết (Markdown)"
VERIFY_REPORT_CSV = "Bảng kết quả (CSV)"
VERIFY_SENTENCE_HEAD = "<b>Câu {number}/{total}</b>"
VERIFY_SENTENCE_CLIPPED = "\n<i>(Câu dài {n} ký tự, đã rút gọn khi hiển thị; báo cáo có đủ nguyên văn.)</i>"
VERIFY_VERDICT = "{icon} <b>{status}</b> — {status_vi} (độ tin cậy {confidence})"
VERIFY_REASONING = "<b>Lý do:</b> {reasoning}"
VERIFY_SEARCHED = "🔎 Tìm lại với: <i>{search}</i>"
VERIFY_TYPE_KEYWORDS = "\n\n<i>Gõ từ khóa để tìm lại cho câu này.</i>"
VERIFY_EVIDENCE_HEAD = "\n\n<b>Bằng chứng:</b>"
VERIFY_EVIDENCE_ITEM = "\n{n}. <i>{where}</i> (điểm {score:.2f})\n{body}"
VERIFY_NO_EVIDENCE = "\n\nKhông tìm thấy đoạn hướng dẫn liên quan."
