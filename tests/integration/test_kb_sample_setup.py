"""`medbot setup` loads the sample KB into an empty KB exactly once; the sample is complete and embedded.

Its first run is the session's own (``sample_setup`` in tests/conftest.py: setup on a new, empty database, the
sample database the other tests read); this test checks what that run did and printed, then runs it again.
"""

from __future__ import annotations

from bot.setup import setup
from db import kb
from engine import triage


async def test_setup_imports_the_sample_kb_once(sample_setup, sample_pool, capsys):
    db, settings = sample_pool, sample_setup.settings
    counts = {
        r["role"]: r["n"]
        for r in await db.fetch(
            "SELECT role, count(*) AS n FROM kb_entries WHERE active AND embedding IS NOT NULL GROUP BY role"
        )
    }
    assert set(counts) == {"patient_dental", "patient_diabetes", "doctor_dental", "doctor_endocrine"}
    assert all(n >= 40 for n in counts.values()), counts
    questions = {
        r["question"] for r in await db.fetch("SELECT question FROM kb_entries WHERE role = 'patient_dental'")
    }
    assert "Răng khôn mọc lệch có cần nhổ không?" in questions
    assert "Răng khôn bị sưng đau phải làm sao?" in questions
    assert "Răng bị ê buốt khi uống nước lạnh là bị gì?" in questions
    kw = await db.fetchval(
        "SELECT keywords FROM kb_entries WHERE role = 'patient_dental' AND code = 'NK-001'"
    )
    assert "ê buốt" in kw and "e buot" in kw
    topics = await db.fetchval("SELECT count(DISTINCT topic) FROM kb_entries WHERE role = 'patient_diabetes'")
    assert topics >= 6
    assert await db.fetchval("SELECT status FROM kb_imports") == "applied"
    # Sample material until the clinic reviews it; the urgent entries carry their KHẨN CẤP mark.
    assert await kb.sample_counts(db) == counts
    urgent = {(e.role, e.code) for role in counts for e in await kb.active_entries(db, role) if e.urgent}
    assert urgent == {
        *(("patient_dental", c) for c in ("NK-012", "NK-014", "NK-018", "NK-025", "NK-042")),
        *(("patient_diabetes", c) for c in ("TD-025", "TD-035", "TD-038")),
    }
    # The triage model is ready and kept in the data folder, so the bot started next loads it.
    assert "Mô hình nhận diện cấp cứu đã sẵn sàng." in sample_setup.output
    model = triage.default_model()
    assert model.ready and model.cache_file is not None and model.cache_file.is_file()
    assert model.cache_file.parent == settings.medbot_data_dir / "models"

    assert await setup(settings) == 0  # second run: the KB is not empty, nothing imported
    out = capsys.readouterr().out  # Vietnamese for the clinic's admin: the KB is kept, the sample not loaded
    assert f"Kho kiến thức đã có {sum(counts.values())} mục đang dùng nên không nạp kho kiến thức mẫu" in out
    assert "already has" not in out
    assert await db.fetchval("SELECT count(*) FROM kb_imports") == 1
