"""The factored phrase alternation (engine/triage/alternation.py) finds exactly what the plain one finds: the same
match (text and place) from every word of a message, on generated phrase lists and messages, and on the rules
file's own lists with messages made of their words."""

from __future__ import annotations

import random
import re
import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.triage.alternation import EXPAND_LIMIT, factor
from engine.triage.rules import RULES_FILE, compile_phrases, default_rules, phrase_patterns

EDGE = "(?<![a-z0-9])(?:{})(?![a-z0-9])"
WORDS = ["kho", "tho", "khong", "dau", "nguc", "be", "bi", "co", "giat", "ngat", "tim", "ho", "o"]


def plain(alternatives: list[str]) -> re.Pattern[str]:
    return re.compile(EDGE.format("|".join(f"(?:{a})" for a in alternatives)))


def factored(alternatives: list[str], expand_limit: int = EXPAND_LIMIT) -> re.Pattern[str]:
    return re.compile(EDGE.format(factor(alternatives, expand_limit=expand_limit)))


def found(rx: re.Pattern[str], text: str) -> list[tuple[int, int] | None]:
    """Where ``rx`` matches when searched from each word start, as ``rules._hits`` resumes."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == " "]
    return [m.span() if (m := rx.search(text, pos)) else None for pos in starts]


def assert_same(alternatives: list[str], texts: list[str], expand_limit: int = EXPAND_LIMIT) -> None:
    a, b = plain(alternatives), factored(alternatives, expand_limit)
    # a context after the alternation that backtracks into it: the first way each alternative matches is kept
    tail = "(?: [a-z]+)?(?: giat)? ;"
    c, d = re.compile(a.pattern + tail), re.compile(b.pattern + tail)
    for text in texts:
        assert found(a, text) == found(b, text), (alternatives, text)
        assert found(c, text) == found(d, text), (alternatives, text)


def assert_same_both_ways(alternatives: list[str], texts: list[str]) -> None:
    """Alike with the leading choices written out, and with them led by a class of their first letters."""
    assert_same(alternatives, texts)
    assert_same(alternatives, texts, expand_limit=0)


def test_the_first_phrase_that_matches_wins_as_in_the_plain_alternation():
    phrases = ["kho tho", "(?:kho|dau) tho nhanh", "k[a-z]+ tho nhanh lam", "dau nguc", "kho tho nhanh"]
    rx = factored(phrases)
    assert rx.search("be kho tho nhanh lam").group(0) == "kho tho"
    assert rx.search("dau tho nhanh").group(0) == "dau tho nhanh"
    assert rx.search("khe tho nhanh lam").group(0) == "khe tho nhanh lam"
    assert_same_both_ways(phrases, ["be kho tho nhanh lam", "dau tho nhanh", "khe tho nhanh lam ; dau nguc"])
    # an optional leading choice is tried before the phrase without it (a lazy one after)
    optional = ["(?:be |co )?[a-z]+", "(?:con )??[a-z]+"]
    assert factored(optional).search("be sot").group(0) == "be sot"
    assert factored(optional[1:]).search("con sot").group(0) == "con"
    assert_same_both_ways(optional, ["be sot", "con sot", "co con sot"])


def test_a_broken_phrase_is_left_for_re_to_refuse():
    assert factor(["kho tho", "muon (chet"]) == "(?:kho tho)|(?:muon (chet)"


def test_shared_beginnings_make_one_branch():
    assert factor(["kho tho", "kho tho nhanh", "dau nguc"]) == "kho tho(?:| nhanh)|dau nguc"
    assert factor(["(?:be|con) sot", "chay mau"]) == "be sot|c(?:on sot|hay mau)"


WORD = st.sampled_from(WORDS)
CHOICE = st.lists(WORD, min_size=1, max_size=4)
# pieces of a phrase, each with the space after it: words, choices (optional or not, an optional one holding its
# space as the rules write it: "(?:bi )?"), classes, look-behinds, gaps, a word whose last letter is optional
PIECE = st.one_of(
    WORD.map(lambda w: w + " "),
    CHOICE.map(lambda ws: "(?:" + "|".join(ws) + ") "),
    CHOICE.map(lambda ws: "(?:" + "|".join(w + " " for w in ws) + ")?"),
    CHOICE.map(lambda ws: "(?:" + "|".join(w + " " for w in ws) + ")??"),
    st.just("[a-z]+ "),
    st.just("[a-z]+ (?:[a-z]+ )?"),
    st.just("(?<!khong )"),
    st.just("(?:[a-z0-9]+ ){0,3}"),
    WORD.map(lambda w: w + "? "),
)
PHRASE = st.lists(PIECE, min_size=1, max_size=5).map(lambda ps: "".join(ps).rstrip(" ") or "o")
TEXT = st.lists(st.sampled_from([*WORDS, "nhanh", ";"]), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(PHRASE, min_size=1, max_size=8), st.lists(TEXT, min_size=1, max_size=6))
def test_generated_phrase_lists_match_alike(phrases, texts):
    assert_same_both_ways(phrases, texts)


def rules_lists() -> list[tuple[list[str], bool]]:
    """The rules file's phrase lists as ``parse_rules`` joins them (with their English and shorthand lists),
    each with whether its letters are folded."""
    data = tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
    lists = [(v, not k.endswith("accented")) for k, v in data["markers"].items() if isinstance(v, list)]
    lists.append((data["glucose"]["words"], True))
    for c in data["category"]:
        lists.append((c.get("alone", []) + c.get("english_alone", []) + c.get("shorthand", []), True))
        for key in ("symptoms", "severity", "exclude", "fragment", "dismiss"):
            lists.append((c.get(key, []) + c.get(f"english_{key}", []), True))
        lists.append((c.get("accented", []), False))
    return [(phrases, folded) for phrases, folded in lists if phrases]


def test_the_rules_files_lists_match_alike_on_messages_of_their_own_words():
    default_rules()  # the product's patterns, compiled once per process (``re`` keeps them)
    rng = random.Random(7)
    lists = rules_lists()
    for phrases, folded in lists:
        alternatives = phrase_patterns(phrases, folded=folded)
        words = sorted({w for a in alternatives for w in re.findall(r"[^\W_]+", a)})
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))) for _ in range(4)]
        # phrases' own words in a row ("kho tho(?: nhanh)?" → "kho tho nhanh"), alone and two joined
        own = [
            " ".join(re.findall(r"[^\W_]+", a)) for a in rng.sample(alternatives, min(5, len(alternatives)))
        ]
        texts += own + [" ".join(rng.sample(own, 2)) for _ in range(2) if len(own) > 1]
        a, b = plain(alternatives), compile_phrases(phrases, folded=folded)
        assert b is not None
        for text in texts:
            assert found(a, text) == found(b, text), (alternatives, text)
    assert len(lists) > 150
