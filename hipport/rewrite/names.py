"""Rename CUDA identifiers found in code (and macro bodies) through the mapping tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from hipport import regexes
from hipport.edits import Edit
from hipport.mappings import Mappings
from hipport.parse.declarations import own_among, user_declared
from hipport.parse.lexer import Lexed
from hipport.rewrite.calls import NAMESPACE_ONLY, UNTAG, Site, parse_call, transform_for
from hipport.tuples import NamedTuple

# What a leftover CUDA API name looks like: reported as `unmapped` so nothing stays CUDA silently.
CUDA_LOOKING = regexes.compile(
    rb"(?:cuda[A-Z_]|cu[A-Z]|CU_|CUDA_|CUDART_|cublas|CUBLAS_|curand|CURAND_|cufft|CUFFT_|"
    rb"cusparse|CUSPARSE_|cusolver|CUSOLVER_|cudnn|CUDNN_|nccl|NCCL_|nvrtc|NVRTC_|nvtx|NVTX_)"
)
_TRAILING_WORD = regexes.compile(rb"(\w+)\s*\Z")
_LOOKBEHIND = 96  # bytes of context enough to see `obj.`, `a->`, `ns ::`, `##`


class Unmapped(NamedTuple):
    name: str
    count: int
    line_offset: int  # first occurrence
    reason: str


def _context(lexed: Lexed, start: int, end: int) -> str:
    """'member', 'qualified', 'pasted' or '' for an identifier at data[start:end]. Kept on the
    Lexed: the renamer and the rules ask for the same tokens."""
    known = lexed.contexts.get(start)
    if known is None:
        known = lexed.contexts[start] = _find_context(lexed, start, end)
    return known


# A name right after any other byte has no `.`, `->`, `::` or `##` before it (a comment ends in
# `/` or a newline, so that byte is code).
_MAY_LEAD_CONTEXT = frozenset(b" \t\r\n\\/.>:#")


def _find_context(lexed: Lexed, start: int, end: int) -> str:
    data = lexed.data
    if start and data[start - 1] not in _MAY_LEAD_CONTEXT:
        stop, last = start, b""
    else:
        stop = lexed.previous_code(start)
        last = data[max(0, stop - 2) : stop]  # most names: neither `.`, `->`, `::` nor `##`
    if last == b"##" or (b"#" in data[end : end + 8] and data[end : end + 8].lstrip().startswith(b"##")):
        return "pasted"
    if last.endswith(b".") or last == b"->":
        return "member"
    if last == b"::":
        q = data[max(0, stop - _LOOKBEHIND) : stop - 2].rstrip()
        # `::cudaFree` (global scope) is the CUDA function; `mylib::cudaFree` or `T<U>::x` is not.
        if q.endswith(b">") or _TRAILING_WORD.search(q):
            return "qualified"
    return ""


def _qualifiers(lexed: Lexed, start: int) -> list[str]:
    """`a::b::` before the name at `start`, as ["a", "b"] (outermost first)."""
    data, out, i = lexed.data, [], start
    while True:
        stop = lexed.previous_code(i)
        if data[stop - 2 : stop] != b"::":
            return out
        j = lexed.previous_code(stop - 2)
        m = _TRAILING_WORD.search(data, max(0, j - _LOOKBEHIND), j)
        if not m:
            return out
        out.insert(0, m.group(1).decode("ascii"))
        i = m.start(1)


class Renamed(NamedTuple):
    edits: list[Edit]
    unmapped: list[Unmapped]
    notes: list[tuple[int, str]]  # (offset, text): what a transform wants the report to say


def rename_identifiers(lexed: Lexed, mappings: Mappings, declared: Callable[[], set[int]] | None = None) -> Renamed:
    """`declared`: returns the file's own declarations (parse.declarations.user_declared),
    shared with the analysis; called only when the file might declare a mapped name."""
    data = lexed.data
    names, transforms = mappings.names, mappings.transforms
    edits: list[Edit] = []
    notes: list[tuple[int, str]] = []
    leftovers: Counter[bytes] = Counter()
    first: dict[bytes, int] = {}
    qualified_rows = _qualified_rows(mappings)
    last_words, prefixes = qualified_rows.last_words, qualified_rows.prefixes
    parts = _answers(mappings, "names.edit-parts")
    # The candidate words that count: a mapped one may be renamed, any other CUDA-looking one
    # reported as unmapped, a qualified row's last word (`par`) only where qualified.
    # `threadIdx`, `min`: nothing to rename or report, wherever they are.
    # Asked once per distinct word of the file (and kept for the next files), then the uses
    # are picked by set membership.
    looked_at = _answers(mappings, "names.looked-at")
    distinct = set(lexed.words)
    for word in distinct.difference(looked_at):
        looked_at[word] = bool(word in names or word in transforms or CUDA_LOOKING.match(word.encode("ascii")))
    looked = {w for w in distinct if looked_at[w]}
    qualifiable = last_words.intersection(distinct).difference(looked)
    wanted = [(tok, word) for tok, word in zip(lexed.identifiers, lexed.words) if word in looked or (
        word in qualifiable and _context(lexed, tok.start, tok.end) == "qualified")]
    own = own_among(lexed, [t.start for t, _ in wanted],
                    declared or (lambda: user_declared(data, lexed.identifiers)))
    new_edit = tuple.__new__  # Edit(...) without the NamedTuple's Python-level __new__: an edit per name
    contexts = lexed.contexts  # the scanner's, for every name (_context finds what it lacks)
    plain = _answers(mappings, "names.plain")
    for tok, word in wanted:
        if tok.start in own:
            continue
        context = contexts.get(tok.start)
        if context is None:
            context = _context(lexed, tok.start, tok.end)
        made = plain.get(word)
        if made is None:
            made = plain[word] = _plain_rename(mappings, word, parts)
        if made and context != "qualified":  # most uses: a mapped name, renamed as the table says
            if not context:  # standing alone (a member or a paste is left as it is)
                edits.append(new_edit(Edit, (tok.start, tok.end, made[0], made[1], word)))
            continue
        key = word  # the table row: a qualified one (`thrust::cuda::par`) where the code says so
        new = names.get(word)
        if context == "qualified":
            key, new = _qualified(lexed, tok.start, word, mappings)
            if key is None:
                continue
            context = ""
        if context:
            continue
        if key in prefixes and _unsupported_tail(data, tok.end, key, mappings):
            # `thrust::cuda::universal_host_pinned_vector`: the whole name has no HIP form, so
            # its `cuda` must not become `hip` either (its last word is reported below).
            continue
        transform = transforms.get(word)
        if transform == UNTAG:
            tag = _struct_keyword(data, tok.start) if new else None  # (unmapped: left as written)
            if tag is not None:
                if _STARTS_DECLARATION.match(data, tok.end):
                    continue  # `struct cudaX;` or `{`: CUDA's own tag declared, left as it is
                edits.append(Edit(tag, tok.start, b"", "transform", key))
        elif transform == NAMESPACE_ONLY:
            # `cub::X` is hipCUB's; a variable that happens to be called `cub` is not.
            if not data[tok.end : tok.end + 16].lstrip(b" \t").startswith(b"::"):
                continue
        elif transform is not None:
            call = parse_call(data, tok.end)
            if call is not None:
                done = transform_for(transform)(Site(data, word, new or "", call, mappings.target_hip))
                new = done.name if done.name != word else None
                edits.extend(done.edits)
                notes.extend((tok.start, n) for n in done.notes)
                if new is None:
                    continue
        if new is None:
            # A name the tables keep as it is (ncclAllReduce with RCCL) is ported, not left over;
            # a known qualified name without a HIP form is reported with its qualifiers.
            if (CUDA_LOOKING.match(tok.text) or key != word) and (
                    key not in mappings.entries or mappings.unsupported_reason(key) is not None):
                leftovers[key.encode()] += 1
                first.setdefault(key.encode(), tok.start)
            continue
        if new == word:
            continue  # `par` in `thrust::cuda::par`: only its qualifier changes
        made = _edit_parts(mappings, parts, key, new)
        edits.append(new_edit(Edit, (tok.start, tok.end, made[0], made[1], key)))
    macros = lexed.defined_names if leftovers else frozenset()
    unmapped = []
    for name, count in sorted(leftovers.items()):
        if name in macros:
            continue  # the project's own macro (CUDA_CHECK, ...), not a CUDA API
        text = name.decode("ascii")
        reason = mappings.unsupported_reason(text) or "unknown to the mapping tables"
        unmapped.append(Unmapped(text, count, first[name], reason))
    return Renamed(edits, unmapped, notes)


_STRUCT_BEFORE = regexes.compile(rb"(?<![\w$])struct[ \t]+\Z")
_STARTS_DECLARATION = regexes.compile(rb"[ \t\r\n]*[;{]")


def _struct_keyword(data: bytes, start: int) -> int | None:
    """Where the `struct` keyword (and the spaces after it) before the name at `start` begins."""
    m = _STRUCT_BEFORE.search(data, max(0, start - 32), start)
    return m.start() if m else None


def _plain_rename(mappings: Mappings, word: str, parts: dict) -> tuple[bytes, str] | bool:
    """The edit's bytes and library for `word` where it stands unqualified in code, when the
    loop below would make them from the table row of that name alone: it is mapped to another
    name, no transform rewrites its call, and it starts no qualified row. False otherwise."""
    new = mappings.names.get(word)
    if new is None or new == word or word in mappings.transforms or word in _qualified_rows(mappings).prefixes:
        return False
    return _edit_parts(mappings, parts, word, new)


def _edit_parts(mappings: Mappings, parts: dict, key: str, new: str) -> tuple[bytes, str]:
    """The bytes of `new` and the library of table row `key`: an edit's parts, made once."""
    made = parts.get((key, new))
    if made is None:
        entry = mappings.lookup(key)
        made = parts[(key, new)] = (new.encode("ascii"), entry.library if entry else "")
    return made


def _qualified(lexed: Lexed, start: int, word: str, mappings: Mappings) -> tuple[str | None, str | None]:
    """For `q::word`: the qualified table row it matches and the new last word (None when the
    row has no HIP form here); (None, None) when no qualified row matches."""
    chain = _qualifiers(lexed, start)
    for i in range(len(chain)):
        key = "::".join(chain[i:] + [word])
        if key in mappings.entries:
            new = mappings.names.get(key)
            return key, (new.rsplit("::", 1)[-1] if new is not None else None)
    return None, None


_NEXT_WORD = regexes.compile(rb"[ \t]*::[ \t]*([A-Za-z_]\w*)")
class _Qualified(NamedTuple):
    prefixes: frozenset[str]  # `thrust`, `thrust::cuda`, ...: proper prefixes of the rows
    last_words: frozenset[str]  # `par`, ...: their last words (names the code may qualify)


def _qualified_rows(mappings: Mappings) -> _Qualified:
    """What the qualified table rows (`thrust::cuda::par`) are made of, once per Mappings."""
    rows = mappings.memo.get("names.qualified")
    if rows is None:
        parts = [k.split("::") for k in mappings.entries if "::" in k]
        rows = mappings.memo["names.qualified"] = _Qualified(
            frozenset("::".join(p[:i]) for p in parts for i in range(1, len(p))),
            frozenset(p[-1] for p in parts))
    return rows


_MAX_ANSWERS = 200_000  # kept per _answers table (a tree's files repeat a few thousand words)


def _answers(mappings: Mappings, name: str) -> dict:
    """A table of the renamer's answers kept with `mappings`, filled as names come: answered
    once per name, not once per use. "names.looked-at": word -> whether the renamer looks at
    it wherever it stands (mapped, transformed or CUDA-looking); "names.edit-parts": (table
    row, new name) -> the edit's bytes and the row's library; "names.plain": word -> those
    bytes and library where the name alone decides them (_plain_rename), else False."""
    answers = mappings.memo.setdefault(name, {})
    if len(answers) > _MAX_ANSWERS:
        answers.clear()
    return answers


def _unsupported_tail(data: bytes, end: int, key: str, mappings: Mappings) -> str | None:
    """The longer qualified row (`key::more`) the code continues into, when the tables know it
    but cannot map it; None otherwise."""
    prefixes = _qualified_rows(mappings).prefixes
    while key in prefixes:
        m = _NEXT_WORD.match(data, end)
        if not m:
            return None
        key = key + "::" + m.group(1).decode("ascii")
        if key in mappings.entries:
            return key if mappings.unsupported_reason(key) is not None else None
        end = m.end()
    return None


# A name that CUDA_LOOKING matches, after the newline before it: one search over all of a
# file's #defined names, a line each (a GL header defines thousands, a CUDA-looking handful).
# The pattern opens with a literal, which the search looks for in C between tries. The names
# alone, not Lexed.defines_named: every ported file asks, and most never read their #define
# records (Lexed.defined_names).
_CUDA_LOOKING_NAME = regexes.compile(rb"\n(" + CUDA_LOOKING.pattern + rb"[^\n]*)")


def cuda_looking_defines(lexed: Lexed) -> tuple[str, ...]:
    names = b"\n" + b"\n".join(lexed.defined_names)
    return tuple(sorted(m.group(1).decode("ascii") for m in _CUDA_LOOKING_NAME.finditer(names)))
