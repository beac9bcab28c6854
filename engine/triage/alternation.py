"""One regular expression for a long list of phrases, factored so Python's ``re`` does not try every phrase at
every word: phrases that start with the same letters share one branch ("kho tho nhanh|kho tho gap|dau nguc" is
read as "(?:kho tho (?:nhanh|gap)|dau nguc)"), and a phrase that starts with a choice ("(?:be|con) sot") is read
as one phrase per choice first, so its letters are shared too.

``factor(alternatives)`` finds exactly what the plain alternation ``(?:a1|a2|…)`` finds, in every context and
from every position: the same match, ending at the same place. Python's ``re`` tries the alternatives in order
and takes the first that leads to a match (then the first way it matches), so the factored pattern keeps that
order wherever two phrases could both start at the same place:
- a phrase joins an earlier branch of the same first letter only when no phrase between them could start with
  that letter (one that starts with a choice, a class, a look-around or an optional part may);
- inside a branch, and among phrases that are not plain letters, the order is the file's;
- writing ``(?:a|b)x`` as ``ax|bx`` and ``(?:a|b)?x`` as ``ax|bx|x`` keeps the order ``re`` tries them in.
Only unquantified plain characters are shared; everything else (classes, groups, escapes, gaps, look-arounds)
is kept as written. A phrase's capture groups may be renumbered (the rules read whole matches only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_META = set(".^$*+?{}[]\\|()")
_QUANT = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_DECIMAL = "\\d"  # in a set of first characters: any decimal digit (``\d`` reads Unicode digits too)
_ESCAPED_SETS = {"d": frozenset([_DECIMAL])}
# a back-reference or a conditional group reads a group by its number: such a list is not factored
_NUMBERED = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")
_ZERO_WIDTH_ESCAPES = set("bBAZ")
EXPAND_LIMIT = 4096  # characters a phrase may grow to when its leading choice is written out


@dataclass(frozen=True, slots=True)
class _Item:
    """One atom of a pattern and its quantifier: ``atom`` is a plain character when ``literal``."""

    atom: str
    quant: str
    kind: str  # literal | escape | class | any | anchor | group | look | other

    @property
    def literal(self) -> bool:
        return self.kind == "literal" and not self.quant

    def text(self) -> str:
        return self.atom + self.quant


def _group_end(pattern: str, start: int) -> int:
    """The index just past the ``)`` closing the group opened at ``start``."""
    depth, i = 0, start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced group in {pattern!r}")


def _class_end(pattern: str, start: int) -> int:
    """The index just past the ``]`` closing the class opened at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    raise ValueError(f"unterminated class in {pattern!r}")


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` ("a|(?:b|c)d" → ["a", "(?:b|c)d"])."""
    parts, begin, i = [], 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
        elif ch == "[":
            i = _class_end(pattern, i)
        elif ch == "(":
            i = _group_end(pattern, i)
        elif ch == "|":
            parts.append(pattern[begin:i])
            begin = i = i + 1
        else:
            i += 1
    parts.append(pattern[begin:])
    return parts


def _items(pattern: str) -> list[_Item]:
    """The atoms of one alternative (no top-level ``|``), each with its quantifier."""
    items: list[_Item] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            end, kind = i + 2, "escape"
        elif ch == "[":
            end, kind = _class_end(pattern, i), "class"
        elif ch == "(":
            end = _group_end(pattern, i)
            head = pattern[i : i + 4]
            if head.startswith(("(?=", "(?!", "(?<=", "(?<!")):
                kind = "look"
            elif head.startswith("(?:") or not head.startswith("(?"):
                kind = "group"
            else:  # atomic, named, conditional, flags, comment: kept as written
                kind = "other"
        elif ch == ".":
            end, kind = i + 1, "any"
        elif ch in "^$":
            end, kind = i + 1, "anchor"
        elif ch in _META:
            end, kind = i + 1, "other"
        else:
            end, kind = i + 1, "literal"
        q = _QUANT.match(pattern, end)
        quant = q.group(0) if q else ""
        items.append(_Item(pattern[i:end], quant, kind))
        i = end + len(quant)
    return items


def _group_body(item: _Item) -> str:
    return item.atom[3:-1] if item.atom.startswith("(?:") else item.atom[1:-1]


def _optional(quant: str) -> bool:
    return quant.startswith(("?", "*", "{0", "{,"))


# The characters a match of a pattern may start with: a set, or None for "any". ``nullable``: it may match
# nothing at all (then whatever follows it decides, so it may start with anything).
def _first(items: list[_Item]) -> tuple[frozenset[str] | None, bool]:
    chars: set[str] = set()
    for item in items:
        first, nullable = _first_of(item)
        if first is None:
            return None, True
        chars |= first
        if not (nullable or _optional(item.quant)):
            return frozenset(chars), False
    return frozenset(chars), True


@lru_cache(maxsize=4096)
def _first_of(item: _Item) -> tuple[frozenset[str] | None, bool]:
    if item.kind == "literal":
        return frozenset(item.atom), False
    if item.kind in ("look", "anchor"):
        return frozenset(), True
    if item.kind == "escape":
        letter = item.atom[1]
        if letter in _ZERO_WIDTH_ESCAPES:
            return frozenset(), True
        if letter in _ESCAPED_SETS:
            return _ESCAPED_SETS[letter], False
        if not letter.isalnum():
            return frozenset(letter), False
        return None, True
    if item.kind == "class":
        return _class_chars(item.atom), False
    if item.kind == "group":
        chars: set[str] = set()
        nullable = False
        for alt in split_alternatives(_group_body(item)):
            first, empty = _first(_items(alt))
            if first is None:
                return None, True
            chars |= first
            nullable = nullable or empty
        return frozenset(chars), nullable
    return None, True


def _may_start(first: frozenset[str] | None, letter: str) -> bool:
    """Whether a match of a pattern that starts with one of ``first`` (None: anything) may start with ``letter``."""
    return first is None or letter in first or (_DECIMAL in first and letter.isdecimal())


def _class_chars(atom: str) -> frozenset[str] | None:
    """The characters of a plain class ("[a-z0-9;]"), or None for one this does not read (negated, ``\\s``…)."""
    body = atom[1:-1]
    if body.startswith("^"):
        return None
    chars: set[str] = set()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            letter = body[i + 1]
            if letter in _ESCAPED_SETS:
                chars |= _ESCAPED_SETS[letter]
            elif letter.isalnum():
                return None
            else:
                chars.add(letter)
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-" and body[i + 2] != "\\":
            chars |= {chr(c) for c in range(ord(ch), ord(body[i + 2]) + 1)}
            i += 3
            continue
        chars.add(ch)
        i += 1
    return frozenset(chars)


def _expand(items: list[_Item], limit: int) -> list[list[_Item]]:
    """A phrase as one or more phrases tried in the same order, its leading choice written out: "(?:a|b)x" →
    "ax", "bx"; "(?:a|b)?x" → "ax", "bx", "x" (a lazy "??" tries "x" first). A choice too long to write out
    once per word is led by a class of its first letters instead (``_dispatched``)."""
    if not items or items[0].kind != "group" or items[0].quant not in ("", "?", "??"):
        return [items]
    rest = items[1:]
    choices = split_alternatives(_group_body(items[0]))
    rest_len = sum(len(i.atom) + len(i.quant) for i in rest)
    if sum(len(c) + rest_len for c in choices) > limit:
        return [_dispatched(items, choices)]
    written = [_items(c) + rest for c in choices]
    if items[0].quant == "?":
        written.append(rest)
    elif items[0].quant == "??":
        written.insert(0, rest)
    return [expanded for w in written for expanded in _expand(w, limit)]


def factor(alternatives: list[str], *, expand_limit: int = EXPAND_LIMIT) -> str:
    """An alternation that matches exactly as ``"|".join(alternatives)`` does, its common beginnings shared.
    A leading choice is written out per word while the phrase stays under ``expand_limit`` characters."""
    return _factored(tuple(alternatives), expand_limit)


@lru_cache(maxsize=512)
def _factored(alternatives: tuple[str, ...], limit: int) -> str:
    plain = "|".join(f"(?:{a})" for a in alternatives)
    if any(_NUMBERED.search(a) for a in alternatives):
        return plain
    try:
        flat = [
            items
            for a in alternatives
            for part in split_alternatives(a)
            for items in _expand(_items(part), limit)
        ]
        return "|".join(_factor(_unique(flat)))
    except (ValueError, IndexError):
        return plain  # not a well-formed pattern: ``re`` says what is wrong with the plain one


def _unique(alternatives: list[list[_Item]]) -> list[list[_Item]]:
    """Without a phrase written a second time: it is tried in the same place, with the same result, as the first
    (so no branch of the factored pattern ever holds two equal phrases either)."""
    seen: set[tuple[_Item, ...]] = set()
    out = []
    for items in alternatives:
        key = tuple(items)
        if key not in seen:
            seen.add(key)
            out.append(items)
    return out


def _factor(alternatives: list[list[_Item]]) -> list[str]:
    """The factored alternatives, in the order ``re`` must try them."""
    # nodes in order: (first letter, the rest of each phrase that starts with it) or (None, [a phrase kept whole])
    nodes: list[tuple[str | None, list[list[_Item]]]] = []
    opaque_first: dict[int, frozenset[str] | None] = {}  # node index → what its phrase may start with
    for items in alternatives:
        if items and items[0].literal:
            letter = items[0].atom
            at = next((n for n in range(len(nodes) - 1, -1, -1) if nodes[n][0] == letter), None)
            if at is not None and not any(
                _may_start(opaque_first[n], letter) for n in range(at + 1, len(nodes)) if nodes[n][0] is None
            ):
                nodes[at][1].append(items[1:])
            else:
                nodes.append((letter, [items[1:]]))
        else:
            first, nullable = _first(items)
            opaque_first[len(nodes)] = None if nullable else first
            nodes.append((None, [items]))
    parts = []
    for letter, members in nodes:
        if letter is None:
            parts.append("".join(i.text() for i in members[0]))
            continue
        rest = _factor(members)
        parts.append(letter + (f"(?:{'|'.join(rest)})" if len(rest) > 1 else rest[0]))
    return parts


def _dispatched(items: list[_Item], choices: list[str]) -> list[_Item]:
    """A phrase that starts with a choice of words ("(?:be|em be|con) ~ sot…") too long to write out per word,
    led by a class of the words' first letters so ``re`` skips it at once at any other letter:
    "[bec](?:(?<=b)e|(?<=e)m be|(?<=c)on) ~ sot…" (the choices in their order, each after its own letter)."""
    if items[0].quant:
        return items
    heads = [_items(c) for c in choices]
    if not all(h and h[0].literal and h[0].atom.isalnum() and h[0].atom.isascii() for h in heads):
        return items
    parts = _factor(_unique(heads))
    letters = "".join(sorted({h[0].atom for h in heads}))
    body = "|".join(f"(?<={p[0]}){p[1:]}" for p in parts)
    return [_Item(f"[{letters}]", "", "class"), _Item(f"(?:{body})", "", "group"), *items[1:]]
