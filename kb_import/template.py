"""The empty KB template clinics fill in (``medbot import --template OUT.xlsx``).

Sheet ``KB``: the headers, one example row, sensible column widths, wrapped text, frozen header. Sheet
``Hướng dẫn``: notes in Vietnamese for the clinic (the importer skips it: it holds no KB table). The example
row has the reserved code ``VD-MẪU`` and is never imported (``kb_import.example``): a clinic may leave it in.
"""

from __future__ import annotations

from pathlib import Path

from kb_import.example import EXAMPLE, EXAMPLE_CODE
from kb_import.headers import FIELD_HEADERS
from kb_import.limits import MASS_HIDE_MAX_ENTRIES, MASS_HIDE_SHARE
from kb_import.roles import BUILTIN_ROLES
from kb_import.validate import MAX_LENGTH

TEMPLATE_FIELDS = ("topic", "subtopic", "code", "question", "answer", "keywords", "explanation", "urgent")
WIDTHS = {
    "topic": 22,
    "subtopic": 18,
    "code": 12,
    "question": 45,
    "answer": 70,
    "keywords": 40,
    "explanation": 50,
    "urgent": 12,
}


def _notes() -> list[tuple[str, str]]:
    roles = "; ".join(f"{role} = {label}" for role, label in BUILTIN_ROLES.items())
    return [
        ("HƯỚNG DẪN NHẬP KHO KIẾN THỨC", ""),
        ("", ""),
        (
            "Mỗi dòng",
            "Một cặp câu hỏi – trả lời do bác sĩ biên soạn. Không gộp ô (merge) trong vùng dữ liệu.",
        ),
        (
            "Dòng ví dụ",
            f"Dòng có mã {EXAMPLE_CODE} ở trang KB chỉ để minh hoạ: hệ thống luôn bỏ qua, không bao giờ nhập "
            "dòng này. Có thể để nguyên hoặc xoá đi.",
        ),
        (
            "Vai trò",
            "Đặt tên trang (sheet) theo vai trò, ví dụ patient_dental; hoặc chọn vai trò khi nhập. "
            f"Các vai trò có sẵn: {roles}. Một tệp có thể có nhiều trang, mỗi trang một vai trò.",
        ),
        (
            FIELD_HEADERS["topic"],
            "Chủ đề lớn, ví dụ “Sâu răng”, “Chế độ ăn”. Để trống thì lấy theo dòng trên.",
        ),
        (FIELD_HEADERS["subtopic"], "Chủ đề nhỏ hơn (không bắt buộc)."),
        (
            FIELD_HEADERS["code"],
            "Mã duy nhất trong vai trò, ví dụ NK-001. Sửa nội dung thì giữ nguyên mã; "
            f"mã mới là mục mới. Bắt buộc. Không dùng mã {EXAMPLE_CODE} (dành cho dòng ví dụ).",
        ),
        (
            FIELD_HEADERS["question"],
            f"Câu hỏi như người bệnh hay hỏi. Bắt buộc, tối đa {MAX_LENGTH['question']} ký tự.",
        ),
        (
            FIELD_HEADERS["answer"],
            f"Câu trả lời rõ ràng, thận trọng (2–6 câu). Bắt buộc, tối đa {MAX_LENGTH['answer']} ký tự.",
        ),
        (
            FIELD_HEADERS["keywords"],
            "Từ khóa, cách nói khác, từ địa phương, cả dạng không dấu; ngăn cách bằng dấu “;”.",
        ),
        (FIELD_HEADERS["explanation"], "Giải thích chi tiết hơn (không bắt buộc)."),
        (
            FIELD_HEADERS["urgent"],
            "Ghi “x” (hoặc “có”) nếu câu trả lời yêu cầu người đọc đi cấp cứu hoặc xử trí ngay, ví dụ "
            "“đến phòng cấp cứu ngay”, “gọi 115”; để trống nếu không. Câu trả lời của mục khẩn cấp sẽ không "
            "kèm câu nhắc thông thường như “bạn nên đặt lịch khám”. Không bắt buộc; cột này có thể bỏ.",
        ),
        ("", ""),
        (
            "Nhập lại",
            "Tệp là toàn bộ kho kiến thức của mỗi vai trò có trong tệp: mục có mã mới được thêm, mục sửa được "
            "cập nhật, mục của vai trò đó không còn trong tệp sẽ bị ẩn (có thể khôi phục bằng cách thêm lại đúng "
            "mã). Chỉ muốn thêm vài mục? Dùng tuỳ chọn “chỉ thêm và cập nhật” (--keep-missing) để không ẩn mục "
            "nào.",
        ),
        (
            "Ẩn nhiều mục",
            f"Nếu lần nhập sẽ ẩn hơn {MASS_HIDE_MAX_ENTRIES} mục, hoặc hơn {MASS_HIDE_SHARE:.0%} số mục đang "
            "dùng của một vai trò, hệ thống dừng lại và "
            "chưa nhập gì; muốn nhập thật thì phải xác nhận riêng (nút xác nhận trong Telegram, hoặc --force "
            "khi nhập bằng lệnh). Tệp thả vào thư mục nhập tự động thì không bao giờ được ẩn nhiều mục như vậy.",
        ),
        (
            "Hoàn tác",
            "Lần nhập gần nhất của một vai trò có thể hoàn tác, các mục trở lại đúng như trước: lệnh "
            "/hoantac patient_dental trong Telegram, hoặc medbot kb undo patient_dental.",
        ),
        (
            "Lỗi",
            "Tệp có dòng lỗi sẽ không được nhập; hệ thống báo rõ trang, dòng, cột cần sửa. Không dùng công "
            "thức (=...) hoặc ô báo lỗi như #N/A.",
        ),
        (
            "Lưu ý",
            "Nội dung chỉ mang tính tham khảo cho người bệnh; tình huống cấp cứu luôn hướng dẫn gọi 115.",
        ),
    ]


def write_template(path: Path) -> Path:
    """Write the template workbook to ``path`` (parent folders are created)."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill

    wb = Workbook()
    ws = wb.active
    ws.title = "KB"
    ws.append([FIELD_HEADERS[f] for f in TEMPLATE_FIELDS])
    ws.append([EXAMPLE[f] for f in TEMPLATE_FIELDS])
    bold, fill = Font(bold=True), PatternFill("solid", fgColor="DDEBF7")
    for idx, name in enumerate(TEMPLATE_FIELDS, start=1):
        cell = ws.cell(row=1, column=idx)
        cell.font, cell.fill = bold, fill
        ws.column_dimensions[cell.column_letter].width = WIDTHS[name]
        ws.cell(row=2, column=idx).alignment = Alignment(wrap_text=True, vertical="top")
    ws.freeze_panes = "A2"

    notes = wb.create_sheet("Hướng dẫn")
    for row in _notes():
        notes.append(list(row))
    notes["A1"].font = Font(bold=True, size=13)
    notes.column_dimensions["A"].width = 18
    notes.column_dimensions["B"].width = 110
    for row in notes.iter_rows(min_row=2):
        row[0].font = bold
        row[1].alignment = Alignment(wrap_text=True, vertical="top")
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return path
