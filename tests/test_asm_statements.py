"""inline_ptx._asm_statement finds an asm statement's template and end with one search per
parenthesis, colon or semicolon; the token-by-token reading it replaces is kept here as the
reference it must agree with."""

import bisect
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.analysis import context_for
from hipport.config import Settings
from hipport.rules import _syntax as sx
from hipport.rules import inline_ptx as ptx

_PLAIN = re.compile(rb"[^():;/\\\s]+")


def reference(ctx, keyword_end: int):
    """The statement read a token at a time: spaces and comments skipped, literals jumped
    over (those before the first top-level `:` are the template), parentheses counted."""
    data = ctx.data
    starts, ends = sx.memo(ctx, "ptx_strings", ptx._string_index)
    pos = ptx._skip_space(ctx, keyword_end)
    while (m := ptx._QUALIFIER.match(data, pos)):
        pos = ptx._skip_space(ctx, m.end())
    if data[pos:pos + 1] != b"(":
        return None
    pos += 1
    pieces, depth, in_template, end = [], 1, True, pos
    while pos < len(data):
        pos = ptx._skip_space(ctx, pos)
        if pos >= len(data):
            break
        i = bisect.bisect_left(starts, pos)
        if i < len(starts) and starts[i] == pos:
            if in_template:
                pieces.append(ptx._literal_text(data[pos:ends[i]]))
            pos = ends[i]
            continue
        plain = _PLAIN.match(data, pos, starts[i] if i < len(starts) else len(data))
        if plain:
            pos = end = plain.end()
            continue
        c = data[pos:pos + 1]
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if depth == 0:
                end = pos + 1
                break
        elif c == b":" and depth == 1:
            in_template = False
        elif c == b";" and depth == 1:
            end = pos
            break
        pos += 1
        end = pos
    return "".join(pieces), end


def statements(data: bytes):
    ctx = context_for(data, "k.cu", "cuda", Settings())
    keyword_ends = [e for s, e in ptx.asm_keywords(data) if not ctx.lexed.in_comment_or_string(s)]
    return [ptx._asm_statement(ctx, e) for e in keyword_ends], [reference(ctx, e) for e in keyword_ends]


_PIECES = [b"asm", b" volatile", b"__asm__", b" ", b"\n", b"\\\n", b"(", b")", b":", b"::", b";", b",",
           b'"mov.u32 %0, %%laneid;"', b'"=r"', b'"+f"', b"(x)", b"(d000)", b"/* ( : */", b"// ) ;\n",
           b"'('", b'R"(a)b)"', b'"a\\"b"', b"x", b"/", b"{", b"}", b'"memory"', b"\t"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_an_asm_statement_reads_as_the_token_by_token_reference(pieces):
    got, want = statements(b"__device__ void f() {\n" + b"".join(pieces))
    assert got == want


def test_a_statement_of_many_operands_and_an_unfinished_one():
    operands = b", ".join(b'"+f"(d%03d)' % i for i in range(300))
    data = (b"__device__ void f() {\n  asm volatile(\"{\\n wgmma.mma_async.sync.aligned.m64n256k16.f32 ...;\\n}\\n\"\n"
            b"    : " + operands + b"\n    : \"l\"(desc_a), \"n\"(int32_t(1)));\n"
            b"  asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x)  // left open\n  \\\n")
    got, want = statements(data)
    assert got == want
    assert got[0][0].startswith("{\n wgmma.mma_async") and data[got[0][1] - 2: got[0][1]] == b"))"
    assert data[:got[1][1]].endswith(b'"=r"(x)')


_WORDS = [b"asm", b"__asm", b"__asm__", b"_", b"__", b"x", b"w", b" ", b"(", b"1", b"as", b"m"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=20))
def test_asm_keywords_are_the_three_spellings_as_whole_words(pieces):
    """asm_keywords finds what finditer of the spellings' alternation between word boundaries
    (the longest first) finds."""
    data = b"".join(pieces)
    spelled = re.compile(rb"(?<!\w)(?:__asm__|__asm|asm)\b")
    assert ptx.asm_keywords(data) == [m.span() for m in spelled.finditer(data)]
