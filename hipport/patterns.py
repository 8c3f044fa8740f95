"""Searching whole files fast. Python's `re` searches for a pattern's leading literal quickly,
but tries a pattern that opens with `\\b`, a lookbehind or an alternation of differently-led
branches at every byte: a pattern searched over a whole file is written literal first, with
its boundary checked behind the literal (or split into one pattern per literal, matched as the
alternation would be); a plain word is found with bytes.find."""

from __future__ import annotations

import itertools
import os
import re

from hipport.parse import IS_WORD_BYTE


def word_start(word: bytes, after_define: bool = False) -> bytes:
    r"""A regex for `\bword` (a word that starts with a word character) that opens with the
    word's literal; with `after_define`, also right after `-D` (`-DCMAKE_CUDA_ARCHITECTURES=80`)."""
    w = re.escape(word)
    if after_define:
        return w + rb"(?:(?<!\w" + w + rb")|(?<=-D" + w + rb"))"
    return w + rb"(?<!\w" + w + rb")"


def word_starts(words) -> bytes:
    r"""`\b(?:w1|w2|...)` for `words` (bytes, each starting with a word character), tried in
    the order given: an alternation of word_start()s, so that re searches for the branches'
    first bytes rather than trying `\b` at every byte."""
    return b"(?:" + b"|".join(word_start(w) for w in words) + b")"


def by_common_start(words: list[str]) -> list[tuple[bytes, bytes]]:
    """`words` grouped by their first two characters, in the order given: each group's common
    start (a literal, unescaped), and an alternation of what follows it in each word."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[:2], []).append(word)
    out = []
    for group in groups.values():
        head = os.path.commonprefix(group)
        out.append((head.encode(), b"|".join(re.escape(w[len(head):].encode()) for w in group)))
    return out


def any_case(*words: bytes) -> tuple[bytes, ...]:
    """Every ASCII upper/lower-case spelling of `words`: rule triggers (which match bytes as
    they are) for names that a rule tests case-blind."""
    out: dict[bytes, None] = {}
    for word in words:
        for spelling in itertools.product(*(dict.fromkeys((bytes([c]).lower(), bytes([c]).upper()))
                                                 for c in word)):
            out[b"".join(spelling)] = None
    return tuple(out)


def name_triggers(names) -> tuple[bytes, ...]:
    """Rule triggers for a set of names (str) that a rule finds anywhere in a file's bytes:
    the names that hold no other one (`tex1D` stands for `tex1Dfetch` and `tex1DLayered`)."""
    words = sorted({n.encode() for n in names})
    return tuple(w for w in words if not any(o != w and o in w for o in words))


def leftmost_matches(patterns, data: bytes) -> list[re.Match[bytes]]:
    """The matches `finditer` of the alternation of `patterns` (in that order) finds: the
    leftmost, the first pattern on a tie, then on from its end. Each pattern is searched on
    its own, so that one opening with a literal is searched fast. No pattern may match empty."""
    out: list[re.Match[bytes]] = []
    pending = [p.search(data) for p in patterns]  # each pattern's next match
    while True:
        best = None
        for m in pending:
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        if best is None:
            return out
        out.append(best)
        pos = best.end()
        pending = [m if m is None or m.start() >= pos else p.search(data, pos)
                   for p, m in zip(patterns, pending)]


def whole_word_starts(data: bytes, word: bytes) -> list[int]:
    """Where `word` (word characters only) stands as a whole word: the starts of `\\bword\\b`'s
    matches, found with bytes.find (no pattern to compile per word)."""
    out, at, end = [], data.find(word), len(data) - len(word)
    while at >= 0:
        if (at == 0 or data[at - 1] not in IS_WORD_BYTE) and (at == end or data[at + len(word)] not in IS_WORD_BYTE):
            out.append(at)
        at = data.find(word, at + 1)
    return out


def python_word_index(data: bytes) -> dict[bytes, list[int]]:
    """Every run of word bytes (a bytes pattern's `\\w+`) with where it starts, in order: each
    run is a whole word, so the index answers whole_word_starts for every word at once."""
    index: dict[bytes, list[int]] = {}
    for m in re.finditer(rb"\w+", data):  # the fallback's: compiled once, in re's cache
        index.setdefault(m.group(), []).append(m.start())
    return index


def starts_of(data: bytes, literal: bytes) -> list[int]:
    """Every offset where `literal` starts (overlaps included)."""
    out, at = [], data.find(literal)
    while at >= 0:
        out.append(at)
        at = data.find(literal, at + 1)
    return out
