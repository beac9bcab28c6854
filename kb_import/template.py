"""The empty KB template clinics fill in (``medbot import --template OUT.xlsx``).

Sheet ``KB``: the headers, one example row, sensible column widths, wrapped text, frozen header. Sheet
``Hướng dẫn``: notes in Vietnamese for the clinic (the importer skips it: it holds no KB table).
"""

from __future__ import annotations

from pathlib import Path

from kb_import.headers import FIELD_HEADERS
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

EXAMPLE = {
    "topic": "Răng nhạy cảm",
    "subtopic": "Ê buốt",
    "code": "NK-001",
    "question": "Răng bị ê buốt khi uống nước lạnh là bị gì?",
    "answer": (
        "Ê buốt khi uống nước lạnh thường do men răng mòn hoặc nướu tụt làm lộ ngà răng. Bạn nên chải răng "
        "bằng bàn chải lông mềm, dùng kem đánh răng dành cho răng nhạy cảm và hạn chế đồ quá chua. Nếu ê buốt "
        "kéo dài trên hai tuần, đau tự nhiên hoặc đau về đêm, hãy đến nha sĩ để được khám."
    ),
    "keywords": "ê buốt; e buot; buốt răng; nhạy cảm ngà; răng ê khi uống lạnh",
    "explanation": "",
    "urgent": "",
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
            "mã mới là mục mới. Bắt buộc.",
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
            "Gửi lại cả tệp của vai trò: mục có mã mới được thêm, mục sửa được cập nhật, mục không còn "
            "trong tệp sẽ bị ẩn (có thể khôi phục bằng cách thêm lại đúng mã).",
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
