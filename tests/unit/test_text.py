"""Folding, diacritics detection and query cleaning on tricky Vietnamese."""

import unicodedata

from engine.text import (
    DiacriticRestorer,
    NearSpelling,
    char_ngrams,
    clean_query,
    fold,
    has_diacritics,
    nfc,
    ngrams,
    strip_diacritics,
    syllables,
)


def test_fold_d_bar_both_cases():
    assert fold("Đau đầu") == "dau dau"
    assert fold("ĐƯỜNG HUYẾT") == "duong huyet"


def test_fold_combining_and_precomposed_agree():
    precomposed = "Răng bị ê buốt"
    combining = unicodedata.normalize("NFD", precomposed)
    assert combining != precomposed
    assert fold(combining) == fold(precomposed) == "rang bi e buot"
    # mixed: precomposed base with a separate combining tone mark (ă + dot below = ặ)
    assert fold("ma\u0306\u0323t") == "mat"
    assert len(fold(precomposed)) == len(precomposed)


def test_fold_unmarked_text_unchanged_but_lowercased():
    assert fold("e bi dau rang qua") == "e bi dau rang qua"
    assert fold("BS OI") == "bs oi"


def test_has_diacritics():
    assert has_diacritics("răng")
    assert has_diacritics("đi")
    assert has_diacritics(unicodedata.normalize("NFD", "bị"))
    assert not has_diacritics("e bi dau rang qua")
    assert not has_diacritics("bs oi")


def test_strip_diacritics_keeps_case():
    assert strip_diacritics("Đà Nẵng, đau răng") == "Da Nang, dau rang"


def test_nfc_collapses_space_and_controls():
    assert nfc("  ra\u0306ng\u200b  bị\n\tđau ") == "răng bị đau"


def test_clean_query_removes_greeting_thanks_signature():
    q = (
        "Chào bác sĩ . Con em 5 tuổi học không tập trung ạ ? Mong bác sĩ tư vấn . Xin cảm ơn . "
        "Nguyễn Thị Bốn ( 1990 )"
    )
    assert clean_query(q) == "Con em 5 tuổi học không tập trung ạ ?"


def test_clean_query_initial_signature_and_anonymous_marker():
    assert clean_query("Bác sĩ cho em hỏi vì sao bị đau dạ dày ạ ? H ( 1994 )") == "vì sao bị đau dạ dày ạ ?"
    assert clean_query("Bị ho lâu ngày có sao không ? Em cảm ơn bác sĩ ! Câu hỏi ẩn danh") == (
        "Bị ho lâu ngày có sao không ?"
    )


def test_clean_query_without_diacritics_and_abbreviations():
    assert (
        clean_query("bs oi e bi dau rang qua!!!! ko biet lam sao???")
        == "em bi dau rang qua! khong biet lam sao?"
    )
    assert clean_query("Xin chao bac si , con em bi sot cao . Cam on bs nhieu a") == "con em bi sot cao"


def test_clean_query_keeps_medical_parentheses_and_falls_back_when_all_noise():
    q = "Tôi uống thuốc kháng đông ( sintrom 4 mg ) mỗi ngày"
    assert clean_query(q) == q
    assert clean_query("Chào bác sĩ ạ") == "Chào bác sĩ ạ"


def test_tokens_and_ngrams():
    assert syllables("Răng bị ê-buốt!") == ["rang", "bi", "e", "buot"]
    assert syllables("Răng", folded=False) == ["răng"]
    assert list(ngrams(["a", "b", "c"], 1, 2)) == ["a", "b", "c", "a b", "b c"]
    assert " ra" in char_ngrams("Răng", 3, 3)


def test_diacritic_restorer_uses_corpus_spelling():
    restorer = DiacriticRestorer(
        ["Răng bị ê buốt khi uống nước lạnh", "Đau răng khôn phải làm sao", "Bé bị sốt"]
    )
    assert restorer.restore("rang bi e buot , dau rang khon") == "răng bị ê buốt , đau răng khôn"
    assert restorer.restore("xyz qua") == "xyz qua"  # unknown words stay as typed


def test_diacritic_restorer_says_how_sure_it_is_and_knows_the_second_reading():
    """In this KB "mat" alone is "mắt" twice and "mất" once: the restorer takes "mắt", two thirds sure,
    with "mất" as its second reading; "mat ngu" is always "mất ngủ", so in that context it is sure."""
    restorer = DiacriticRestorer(["Mắt bị đỏ", "Mắt mờ", "Mất ngủ kéo dài"])
    [(_, choice, sure, second)] = restorer.readings("mat")
    assert (choice, round(sure, 2), second) == ("mắt", 0.67, "mất")
    assert [(c, s, o) for _, c, s, o in restorer.readings("mat ngu")] == [
        ("mất", 1.0, "mất"),
        ("ngủ", 1.0, "ngủ"),
    ]
    assert restorer.restore("mat") == "mắt"
    assert restorer.restore("mat", keep_below=0.8) == "mat"  # unsure: left as typed
    # the restored text, and the same with every unsure word's second reading (none when all are sure)
    assert restorer.restore_both("dau mat", 0.8) == ("dau mắt", "dau mất")
    assert restorer.restore_both("mat ngu", 0.8) == ("mất ngủ", None)


def test_diacritic_restorer_prefers_the_spelling_of_the_entries_found_for_the_message():
    """The KB writes "toi bi" as "tối bị" (in the evening) twice and "tôi bị" (I have) once, so "toi bi mat
    ngu" (I can't sleep) is restored as "tối bị mất ngủ". Given the entry the sparse leg found for it ("Tôi bị
    mất ngủ lâu ngày"), the restorer reads that entry's bigram "tôi bị" first; words the entry lacks keep the
    KB's spelling ("đau đầu")."""
    restorer = DiacriticRestorer(["Buổi tối bị đau đầu", "Tối bị ho nhiều", "Tôi bị mất ngủ lâu ngày"])
    near = NearSpelling([("Tôi bị mất ngủ lâu ngày", 1.0)])
    assert restorer.restore("toi bi mat ngu , dau dau") == "tối bị mất ngủ , đau đầu"
    assert restorer.restore_near("toi bi mat ngu , dau dau", near, context_first=True) == (
        "tôi bị mất ngủ , đau đầu"
    )
    # no entry found: the KB-wide restoration
    assert restorer.restore_near("toi bi mat ngu", NearSpelling([])) == restorer.restore("toi bi mat ngu")
