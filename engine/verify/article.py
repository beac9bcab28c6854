"""Article processing: a document → the sentences to verify, each with its context and flags.

Splitting is Vietnamese-aware: a full stop ends a sentence only when it is followed by white space and an
upper-case letter, a digit, a quote or an opening bracket, and the word before it is not an abbreviation
("TS.", "BS.", "ThS.", "PGS.", "GS.", "Tp.", "BV.", "TT.", "Th.S", initials such as "N.", …); decimals
("2.5", "7,5") and thousands ("1.000") never split because a digit follows the dot directly. "v.v." ends a
sentence only when an upper-case word follows. List markers ("1.", "a)", "-", "•") are removed by the
document reader and the item is flagged as a bullet.

Headings are kept as items (``is_heading``) so the clinician sees where they are, but they are context, not
claims: the verifier never judges them.

Limits (an article is an upload from a stranger's point of view too): at most ``MAX_ARTICLE_BYTES`` of file,
at most ``MAX_ARTICLE_SENTENCES`` sentences per check (``DocumentError`` with a Vietnamese message saying so;
the clinician splits the article), a title of at most ``MAX_TITLE_CHARS`` characters (longer ones are
shortened: the title goes into chat messages and file names). Splitting is linear in the text's length (no
regular expression that backtracks, no copy of the rest of the text per sentence), so a 5 MB paragraph or a
run of thousands of dots is split in well under a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.text import squash
from engine.untrusted import MB, vn_number
from engine.verify.documents import Block, DocumentError, read_blocks

MAX_ARTICLE_BYTES = 5 * MB
MAX_ARTICLE_SENTENCES = 2000
_PASTED_MD_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s+\S")
MAX_TITLE_CHARS = 200

ABBREVIATIONS = frozenset(
    """
    ts bs ths pgs gs tp bv tt th.s ks cn ds dr mr mrs ms st no vs p q tx kts ths.bs pgs.ts gs.ts bsck bscki
    bsckii ck ckii cki tr hn hcm tw ubnd sđt đt e.g i.e etc
    """.split()
)
_OPENERS = "\"'“‘([«"
# A run of sentence punctuation, closing quotes or brackets, then white space or the end. Written to match
# in linear time whatever the text: "[.!?…]" rather than "(?:\.\.\.|[.!?…])" (whose alternation backtracks
# exponentially on a long run of dots), a run only from its first character (the look-behind), and
# possessive quantifiers (a run that is not followed by a space fails at once, not once per shorter run).
_SENT_END = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’)\]»]*+(?=\s|$)")
_NEXT_CHAR = re.compile(r"\s*(\S)")


def _word_before(text: str, end: int) -> str:
    start = end
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in _OPENERS:
        start -= 1
    return text[start:end]


def _is_abbreviation(word: str) -> bool:
    bare = word.rstrip(".").lower()
    if not bare:
        return False
    if bare in ABBREVIATIONS:
        return True
    # PGS.TS, ThS.BS and other dotted title chains
    if "." in bare and all(part in ABBREVIATIONS for part in bare.split(".") if part):
        return True
    return False


def _is_initial(text: str, start: int, word: str) -> bool:
    """A capital initial inside a name ("Nguyễn V. An"), not "vitamin D." ending a sentence."""
    if len(word) != 1 or not word.isupper():
        return False
    before = text[max(0, start - 200) : start].rstrip().split(" ")[-1:]
    return bool(before and before[0][:1].isupper())


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph of (Vietnamese) text."""
    text = squash(text)
    if not text:
        return []
    out: list[str] = []
    start = 0
    for match in _SENT_END.finditer(text):
        end = match.end()
        following = _NEXT_CHAR.match(text, end)
        first = following.group(1) if following else ""
        if first and not (first.isupper() or first.isdigit() or first in _OPENERS or first in "-•"):
            continue
        punct = match.group(0)
        if punct.startswith(".") and not punct.startswith("..."):
            word = _word_before(text, match.start())
            if word.lower() in ("v.v", "vv", "v.v."):
                if not first or first.isupper():
                    pass  # "…, v.v. Sau đó" ends the sentence
                else:
                    continue
            elif _is_abbreviation(word) or _is_initial(text, match.start() - len(word), word):
                continue
        sentence = text[start:end].strip()
        if sentence:
            out.append(sentence)
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


@dataclass(slots=True)
class ArticleSentence:
    """One item of an article: a sentence to verify, or a heading kept as context."""

    idx: int
    text: str
    section: str = ""  # the top heading above the sentence (the article title excluded)
    subsection: str = ""  # deeper headings, joined with " › "
    paragraph: int = 0  # 1-based paragraph (or list item) number in the article; 0 for headings
    sentence: int = 0  # 1-based sentence number inside its paragraph
    is_heading: bool = False
    is_bullet: bool = False
    heading_level: int = 0
    lead: str = ""  # for list items: the sentence introducing the list ("… gồm:")
    previous: str = ""  # the sentence before, for context

    @property
    def location(self) -> str:
        return " › ".join(p for p in (self.section, self.subsection) if p)

    def context(self) -> dict[str, Any]:
        """The JSON context stored with the item and shown to the LLM."""
        return {
            "section": self.section,
            "subsection": self.subsection,
            "paragraph": self.paragraph,
            "sentence": self.sentence,
            "is_bullet": self.is_bullet,
            "heading_level": self.heading_level,
            "lead": self.lead,
            "previous": self.previous,
        }


@dataclass(slots=True)
class Article:
    title: str
    items: list[ArticleSentence] = field(default_factory=list)

    @property
    def claims(self) -> list[ArticleSentence]:
        return [i for i in self.items if not i.is_heading]


def _short_title(title: str) -> str:
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def article_from_blocks(
    blocks: list[Block], default_title: str = "", *, max_sentences: int = MAX_ARTICLE_SENTENCES
) -> Article:
    """Sentences with context. A single level-1 heading opening the article is its title, not a section.

    More than ``max_sentences`` sentences: ``DocumentError`` naming the limit and the article's count."""
    title = default_title
    headings = [b for b in blocks if b.kind == "heading"]
    if blocks and blocks[0].kind == "heading" and sum(1 for h in headings if h.level <= blocks[0].level) == 1:
        title = blocks[0].text
        blocks = blocks[1:]
    article = Article(title=_short_title(title or "Bài viết"))
    count = 0
    path: list[tuple[int, str]] = []
    paragraph = 0
    previous = ""
    lead = ""
    for block in blocks:
        if block.kind == "heading":
            path = [p for p in path if p[0] < block.level] + [(block.level, block.text)]
            article.items.append(
                ArticleSentence(
                    idx=len(article.items),
                    text=block.text,
                    section=path[0][1],
                    subsection=" › ".join(p[1] for p in path[1:]),
                    is_heading=True,
                    heading_level=block.level,
                )
            )
            lead = ""
            continue
        paragraph += 1
        sentences = split_sentences(block.text)
        count += len(sentences)
        if count > max_sentences:
            continue  # over the limit: only counting now, for the message
        for n, sentence in enumerate(sentences, 1):
            article.items.append(
                ArticleSentence(
                    idx=len(article.items),
                    text=sentence,
                    section=path[0][1] if path else "",
                    subsection=" › ".join(p[1] for p in path[1:]),
                    paragraph=paragraph,
                    sentence=n,
                    is_bullet=block.kind == "bullet",
                    lead=lead if block.kind == "bullet" else "",
                    previous=previous,
                )
            )
            previous = sentence
        if block.kind == "paragraph":
            lead = sentences[-1] if sentences and sentences[-1].endswith(":") else ""
    if count > max_sentences:
        raise DocumentError(
            f"bài viết có {vn_number(count)} câu, vượt giới hạn {vn_number(max_sentences)} câu cho mỗi lần kiểm "
            "tra; hãy chia bài viết thành nhiều phần rồi gửi từng phần"
        )
    return article


def pasted_name(text: str) -> str:
    """The file name a pasted article is parsed as: Markdown when it has Markdown headings (copied from a
    .md file or a chat), plain text otherwise (Telegram's /verify and the console's article check)."""
    return "bai-viet.md" if _PASTED_MD_HEADING.search(text) else "bai-viet.txt"


def parse_article(
    data: bytes | str, filename: str = "article.txt", *, max_sentences: int = MAX_ARTICLE_SENTENCES
) -> Article:
    """An article from pasted text or a .txt/.md/.docx file's content; ``DocumentError`` (a Vietnamese
    message for the clinician) when it cannot be read or breaks a limit."""
    stem = filename.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    blocks = read_blocks(data, filename, max_bytes=MAX_ARTICLE_BYTES)
    return article_from_blocks(blocks, default_title=stem, max_sentences=max_sentences)
