"""How much of the no-diacritics loss is the restorer's, and which of its errors? (issue 21, eighth round;
research, not the product.)

An unmarked message is embedded after ``DiacriticRestorer`` gives it the KB's spelling back (the sparse leg and
the fusion read folded text, so the dense vector is the only place where marks matter). Here the text the dense
leg embeds for every dev message of ``questions`` typed without marks is replaced, syllable by syllable:

oracles, built from the message as typed —

- ``restorer``: the product's restoration (no oracle);
- ``function-words``: the restorer's spelling, except where the typed syllable is one of
  ``engine.text.FUNCTION_WORDS`` ("tôi", "vậy", "rất", "rồi", "nữa"...): those errors corrected;
- ``typed``: every syllable as typed (perfect restoration, the typed capitals too);
- ``typed-lowercase``: every syllable spelled as typed, in the restorer's case (it writes the KB's lowercase);

and candidate restorers that use only what the product has —

- ``local``: bigram and syllable votes of the message's top ``LOCAL_CANDIDATES`` sparse-leg entries (the
  entries it is probably about) weighted ``LOCAL_WEIGHT`` times the whole KB's, then the KB's as today;
- ``trigram``: the middle syllable's spelling in the KB's folded trigram when the KB has it, else as today;
- ``shares``: each neighbour votes with the share of each spelling in the KB's folded bigram (not only the
  best spelling with its raw count), so an ambiguous frequent pair ("bi tieu": "bị tiêu chảy") no longer
  outvotes an unambiguous rare one ("tieu rat": "tiểu rắt").

Prints the share of syllables spelled as typed, and with ``--search`` P@1 / hit@10 of the unmarked run through
``KBSearch`` with the query adapter cross-fitted within dev (``query_adapter_crossfit.cross_fitted``; the
unmarked map moves the variant's vector).

    PYTHONPATH=$PWD python -m bench.research.restoration_oracle [--search] [--variants restorer,typed,...]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from itertools import pairwise

import engine.retrieval.search as search_module
from bench.research.query_adapter_crossfit import cross_fitted
from bench.retrieval_shapes import DiskCachedEmbedder, build_shapes
from engine.retrieval.sparse import SparseIndex, spelling_fields
from engine.text import FUNCTION_WORDS, clean_query, fold, nfc, split_words, strip_diacritics

VARIANTS = ("restorer", "function-words", "typed", "typed-lowercase", "local", "trigram", "shares")
ORACLES = ("function-words", "typed", "typed-lowercase")
LOCAL_CANDIDATES = 50
LOCAL_WEIGHT = 100.0
_WORD = re.compile(r"\w+")  # as engine.text.split_words


def _words(text: str, limit: int = 40) -> list[str]:
    return split_words(nfc(text).lower())[:limit]  # as DiacriticRestorer learns a text


def _fill(text: str, chosen: list[str | None]) -> str:
    """``text`` with its i-th word replaced by ``chosen[i]`` (kept when None or when it carries marks)."""
    out, last = [], 0
    for m, word in zip(_WORD.finditer(text), chosen, strict=True):
        keep = word is None or not m.group(0).isascii()
        out += [text[last : m.start()], m.group(0) if keep else str(word)]
        last = m.end()
    return "".join([*out, text[last:]])


class Spellings:
    """Every marked spelling of each folded syllable, bigram and trigram of a corpus, with its count."""

    def __init__(self, texts: list[str]) -> None:
        self.uni: dict[str, Counter[str]] = defaultdict(Counter)
        self.bi: dict[tuple[str, str], Counter[tuple[str, str]]] = defaultdict(Counter)
        self.tri: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for text in texts:
            words = _words(text)
            for w in words:
                self.uni[fold(w)][w] += 1
            for a, b in pairwise(words):
                self.bi[(fold(a), fold(b))][(a, b)] += 1
            for a, b, c in zip(words, words[1:], words[2:], strict=False):
                self.tri[(fold(a), fold(b), fold(c))][b] += 1

    def votes(self, folded: list[str], i: int, shares: bool = False) -> Counter[str]:
        """Spellings of ``folded[i]`` voted by its bigrams with either neighbour: the best spelling of each
        pair with its count (as ``DiacriticRestorer``), or every spelling with its share of the pair."""
        votes: Counter[str] = Counter()
        keys = []
        if i > 0:
            keys.append(((folded[i - 1], folded[i]), 1))
        if i + 1 < len(folded):
            keys.append(((folded[i], folded[i + 1]), 0))
        for key, side in keys:
            pairs = self.bi.get(key)
            if not pairs:
                continue
            if shares:
                total = sum(pairs.values())
                for pair, n in pairs.items():
                    votes[pair[side]] += n / total
            else:
                pair, n = pairs.most_common(1)[0]
                votes[pair[side]] += n
        return votes


def _restore(kb: Spellings, text: str, mode: str, local: Spellings | None = None) -> str:
    folded = [fold(m.group(0)) for m in _WORD.finditer(text)]
    chosen: list[str | None] = []
    for i, f in enumerate(folded):
        votes: Counter[str] = Counter()
        if (
            mode == "trigram"
            and 0 < i < len(folded) - 1
            and (tri := kb.tri.get(tuple(folded[i - 1 : i + 2])))
        ):
            votes = Counter(dict(tri.most_common(1)))
        if not votes and local is not None:
            votes = Counter({w: LOCAL_WEIGHT * n for w, n in local.votes(folded, i).items()})
            votes.update(kb.votes(folded, i))
        if not votes:
            votes = kb.votes(folded, i, shares=mode == "shares")
            if votes and mode == "shares":  # ties between contexts: the syllable's own frequency
                own = kb.uni.get(f, Counter())
                votes.update({w: 1e-3 * own[w] / max(1, sum(own.values())) for w in votes})
        if not votes:
            own = Counter(dict(kb.uni.get(f, Counter()).most_common(1)))
            if local is not None and f in local.uni:
                own[local.uni[f].most_common(1)[0][0]] += LOCAL_WEIGHT * local.uni[f].most_common(1)[0][1]
            votes = own
        chosen.append(votes.most_common(1)[0][0] if votes else None)
    return _fill(text, chosen)


def variant_texts(variant: str) -> tuple[dict[str, str], float]:
    """Cleaned unmarked message -> the text the dense leg embeds under ``variant``, and the share of syllables
    spelled as typed (messages whose cleaning differs without marks are left to the restorer, not counted)."""
    shape = build_shapes()["questions"]
    index = SparseIndex(shape.entries)
    restorer = index.build_restorer()
    texts = [t for e in shape.entries for t in spelling_fields(e)]
    kb = Spellings(texts) if variant not in ("restorer", *ORACLES) else None
    out: dict[str, str] = {}
    right = total = 0
    for q in shape.queries["dev"]:
        typed, bare = clean_query(q.text), clean_query(strip_diacritics(q.text))
        if kb is None:
            restored = restorer.restore(bare)
        elif variant == "local":
            top = index.top(index.scores(bare), LOCAL_CANDIDATES)
            near = [index.entries[index.position[eid]] for eid, _ in top]
            local = Spellings([t for e in near for t in spelling_fields(e)])
            restored = _restore(kb, bare, variant, local)
        else:
            restored = _restore(kb, bare, variant)
        typed_words = split_words(typed)
        spans = [m.span() for m in _WORD.finditer(restored)]
        if len(typed_words) != len(spans):
            continue
        pieces, last = [], 0
        for (start, end), want in zip(spans, typed_words, strict=True):
            got = restored[start:end]
            if variant == "typed" or (variant == "function-words" and nfc(want.lower()) in FUNCTION_WORDS):
                got = want
            elif variant == "typed-lowercase":
                got = want.lower() if got.islower() else want
            pieces += [restored[last:start], got]
            last = end
            right += nfc(got.lower()) == nfc(want.lower())
            total += 1
        out[bare] = "".join([*pieces, restored[last:]])
    return out, right / max(1, total)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--search", action="store_true", help="also search the unmarked run (5 x 702 searches)")
    args = ap.parse_args()
    product = search_module._embedding_texts
    embedder = DiskCachedEmbedder()
    print("variant | syllables as typed | P@1 / hit@10 typed | P@1 / hit@10 without marks | nodiac loss")
    for variant in args.variants.split(","):
        texts, accuracy = variant_texts(variant)
        if not args.search:
            print(f"{variant} | {accuracy:.4f} | | |", flush=True)
            continue

        def embedded(index: SparseIndex, text: str, texts: dict[str, str] = texts) -> tuple[str, ...]:
            return (texts[text],) if text in texts else product(index, text)

        search_module._embedding_texts = embedded
        try:
            runs = cross_fitted(embedder, lambda res: {}, shapes=["questions"])["questions"]
        finally:
            search_module._embedding_texts = product
        figures = {
            run: (
                sum(o.rank == 1 for o in runs[run]) / len(runs[run]),
                sum(o.rank is not None for o in runs[run]) / len(runs[run]),
            )
            for run in ("answerable", "nodiac")
        }
        (p1, hit), (p1_bare, hit_bare) = figures["answerable"], figures["nodiac"]
        print(
            f"{variant} | {accuracy:.3f} | {p1:.3f} / {hit:.3f} | {p1_bare:.3f} / {hit_bare:.3f} | "
            f"{p1 - p1_bare:.4f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
