"""declaration-clash: the code's own declarations that clash with HIP's once ported.

The rules report code that nvcc accepts and hipcc rejects after a faithful rename: the port is
right name by name, and the clash comes from what HIP declares differently (one type where CUDA
has two, operators HIP's vector types already define) or from a file declaring CUDA's API.
"""

from __future__ import annotations

import re

from hipport import regexes
from hipport.rules import Guarded, Hit, rule
from hipport.rules import _syntax as sx

_WORD = regexes.compile(r"\w+")
_SPACES = regexes.compile(r"\s+")
_PUNCT_SPACES = regexes.compile(r"\s*([*&,<>()\[\]])\s*")  # `const char *` and `const char*` alike
# Where a function's name stands in its declarator (not a function pointer's `(*cb)`).
_NAMES = frozenset({"identifier", "field_identifier", "qualified_identifier", "operator_name",
                    "destructor_name", "template_function"})
_SCOPES = ("namespace_definition", "class_specifier", "struct_specifier", "union_specifier")


def _param_name(param):
    """The identifier a parameter declares, or None (an unnamed parameter)."""
    node = param.child_by_field_name("declarator")
    while node is not None and node.type != "identifier":
        inner = node.child_by_field_name("declarator")
        if inner is None:  # `(&arr)`: the parenthesised declarator has no field name
            inner = next((c for c in node.named_children if c.type.endswith("declarator") or c.type == "identifier"), None)
        node = inner
    return node


def _signature(data: bytes, params) -> tuple[str, ...]:
    """Each parameter's type as written: its text without the name or a default value."""
    out = []
    for p in params.named_children:
        if p.type == "comment":
            continue
        end = p.end_byte
        if p.type == "optional_parameter_declaration":
            value = p.child_by_field_name("default_value")
            if value is not None:
                end = value.start_byte
        text = data[p.start_byte:end]
        name = _param_name(p)
        if name is not None and name.end_byte <= end:
            text = data[p.start_byte:name.start_byte] + data[name.end_byte:end]
        text = _SPACES.sub(" ", text.decode("utf-8", "replace").strip().rstrip("=").strip())
        out.append(_PUNCT_SPACES.sub(r"\1", text))
    return tuple(out)


# A parameter declared with a CUDA driver (CU*) or runtime (cuda*) type: `CUresult error,`.
# A driver type's runtime counterpart maps to the same HIP type (CUresult and cudaError_t to
# hipError_t), so overloads can merge only in files with both. Two patterns, each starting with
# its literal: searched for in C, where a leading \b or an alternation is tried at every byte
# (9 MB of cuda-samples took 1.5 G more instructions so).
_DRIVER_PARAM = regexes.compile(rb"CU[a-z]\w*[\s*&]+\w+\s*[,)=]")
_RUNTIME_PARAM = regexes.compile(rb"cuda[A-Z]\w*[\s*&]+\w+\s*[,)=]")
# The word that ends a (right-stripped) text: `(?<!\w)` makes a start inside a word fail at once,
# where `(\w+)\s*\Z` backtracked through every word of the text.
_LAST_WORD = regexes.compile(rb"(?<!\w)\w+\Z")
_BRACKETS = regexes.compile(rb"[();{}]")
_LOOK_BACK = 512  # bytes searched for the `(` a parameter list opens with
# As the rule's trigger: searched only in files holding `CUa` ... `CUz` (found in the analysis'
# one pass over the file), not in every file that says CUDA.
_DRIVER_TRIGGER = Guarded(_DRIVER_PARAM, tuple(b"CU" + bytes([c]) for c in range(ord("a"), ord("z") + 1)))


def _suspects(ctx) -> set[str]:
    """Names of functions with a parameter of a driver type and (in the same or another
    declaration) one of a runtime type: the only ones whose overloads can merge, found from
    the text before any parse."""
    driver = _owners(ctx, _DRIVER_PARAM)
    return driver & _owners(ctx, _RUNTIME_PARAM) if driver else set()


def _list_open(data: bytes, start: int) -> int:
    """The `(` that opens the parameter list holding `start`, stepping back over balanced
    parentheses (`void (*cb)(int), CUresult e`); -1 where a `;` or a brace comes first."""
    depth = 0
    for m in reversed(list(_BRACKETS.finditer(data, max(0, start - _LOOK_BACK), start))):
        c = m.group()
        if c == b")":
            depth += 1
        elif c != b"(":
            return -1
        elif depth == 0:
            return m.start()
        else:
            depth -= 1
    return -1


def _owners(ctx, pattern) -> set[str]:
    """The names of the functions whose parameter lists hold a match of `pattern` (found back
    from it, see _list_open)."""
    data = ctx.data
    out = set()
    for m in ctx.code_matches(pattern):
        i = _list_open(data, m.start())
        if i < 0:
            continue
        owner = _LAST_WORD.search(data[max(0, i - 128) : i].rstrip())
        if owner is not None:
            out.add(owner.group().decode("ascii", "replace"))
    return out


def _declarators_named(ctx, names: set[str]):
    """The function declarators of the functions so named, in source order: found from each
    `name(` in code up the tree (a few parents), not by a walk over the whole tree."""
    root, found = ctx.tree.root_node, {}
    for name in sorted(names):
        word = name.encode("ascii", "replace")
        for m in ctx.code_matches(re.compile(rb"\b" + re.escape(word) + rb"\s*\(")):
            node = root.descendant_for_byte_range(m.start(), m.start() + len(word))
            for _ in range(4):  # identifier, (qualified name,) declarator
                if node is None or node.type == "function_declarator":
                    break
                node = node.parent
            if node is not None and node.type == "function_declarator":
                found[node.start_byte] = node
    return [found[k] for k in sorted(found)]


def _ported(signature: tuple[str, ...], names) -> tuple[str, ...]:
    return tuple(_WORD.sub(lambda m: names.get(m.group(), m.group()), t) for t in signature)


@rule(code="HP1201", name="overloads-merged-by-port", category="declaration-clash",
      severity="error", effort="low", triggers=(_DRIVER_TRIGGER,))
def overloads_merged_by_port(ctx):
    """Reports overloads whose CUDA parameter types become one HIP type.

    What it does:
    Flags a function declared twice in one scope with parameter types that differ in CUDA
    but not after the port: CUresult and cudaError_t both become hipError_t, CUstream and
    cudaStream_t both hipStream_t, and so on for the driver and runtime API types.

    Why it matters on AMD GPUs:
    HIP has one API where CUDA has a driver and a runtime API, so their types are one type.
    Overloads on the two (an error-string helper for each, as in cuda-samples' helper_cuda.h)
    become two definitions of the same function: hipcc stops with "redefinition".

    Example:
    const char* errorName(cudaError_t e);
    const char* errorName(CUresult e);

    Fix:
    Keep one of them for HIP: put the other under `#if !defined(__HIP_PLATFORM_AMD__)`, or
    give the two different names.
    """
    data, names = ctx.data, ctx.mappings.names
    suspects = _suspects(ctx)
    if not suspects:
        return  # no function has both a driver-type and a runtime-type parameter: no parse
    seen: dict[tuple, tuple[tuple[str, ...], int]] = {}
    for decl in _declarators_named(ctx, suspects):
        name = decl.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters")
        if name is None or params is None or name.type not in _NAMES:
            continue
        if not sx.relevant(ctx, name.start_byte):
            continue
        scope = next(sx.enclosing(ctx, decl, *_SCOPES), None)
        signature = _signature(data, params)
        key = (scope.start_byte if scope is not None else -1, sx.text(name), _ported(signature, names))
        first = seen.setdefault(key, (signature, name.start_byte))
        if first[0] == signature:
            continue  # the same declaration again (a prototype and its definition)
        what = sx.text(name)
        line = ctx.source.line_col(first[1])[0]
        yield Hit(name.start_byte, name.end_byte,
                  f"`{what}({', '.join(signature)})` and `{what}({', '.join(first[0])})` (line {line}) "
                  f"become one signature in HIP, `{what}({', '.join(key[2])})`: the overloads are "
                  f"a redefinition there",
                  "keep one for HIP (the other under #if !defined(__HIP_PLATFORM_AMD__)), or rename one")


# The vector types HIP defines as HIP_vector_type, whose members include `+=`, `-=`, `*=` and
# `/=` taking the same vector type: a user's non-member operator with those operands makes every
# use ambiguous (checked with hipcc 5.2; `%=`, `&=`, ... and scalar right operands are fine).
_VECTOR = (rb"(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]")
# (No leading \b: the literal `operator` is then scanned for in C.)
_COMPOUND = regexes.compile(
    rb"operator\s*([-+*/])=\s*\(\s*(?:const\s+)?(" + _VECTOR + rb")\s*&\s*\w*\s*,\s*(?:const\s+)?("
    + _VECTOR + rb")\s*&?\s*\w*\s*\)")


@rule(code="HP1202", name="vector-compound-operator-redefined", category="declaration-clash",
      severity="error", effort="low", triggers=(Guarded(_COMPOUND, (b"operator",)),))
def vector_compound_operator_redefined(ctx):
    """Reports `+=`, `-=`, `*=` or `/=` defined for two CUDA vectors of the same type.

    What it does:
    Flags a non-member operator+=, -=, *= or /= whose operands are both the same vector type
    (float3, float4, int2, ...), as helper_math.h-style headers define them.

    Why it matters on AMD GPUs:
    CUDA's vector types are plain structs without operators. HIP's are HIP_vector_type
    templates that already have these operators as members, so with the header's own every
    `a += b` is ambiguous and hipcc stops ("use of overloaded operator '+=' is ambiguous").
    Operators with a scalar right side, binary `+`, and the other compound operators do not
    clash.

    Example:
    inline __host__ __device__ void operator+=(float4& a, float4 b) { a.x += b.x; ... }

    Fix:
    Put the definition under `#if !defined(__HIP_PLATFORM_AMD__)`: HIP's member operator does
    the same component-wise update.
    """
    for m in ctx.code_matches(_COMPOUND):
        if m.group(2) != m.group(3) or not sx.relevant(ctx, m.start()):
            continue
        vec = m.group(2).decode()
        yield Hit(m.start(), m.end(1) + 1,
                  f"`{vec} {m.group(1).decode()}= {vec}` is a member of HIP's {vec}: with this "
                  "definition too, every use is ambiguous under hipcc",
                  "put it under #if !defined(__HIP_PLATFORM_AMD__); HIP's operator does the same")


# A file declaring CUDA's own types (a header that re-declares the driver API for loading it
# at run time, as cuew and cuda-samples' dynlink headers do), written with single spaces as
# those are: the words come from the analysis' one pass over the file, the pattern is searched
# only where one of them is.
_DECLARES_CUDA_TYPE = Guarded(regexes.compile(rb"typedef (?:enum|struct) (?:CU|cuda)[A-Za-z]"),
                              (b"typedef enum CU", b"typedef struct CU", b"typedef enum cuda", b"typedef struct cuda"))


def _declared_names(ctx):
    """(node, name) of the enumerators and typedef names the file declares, in order."""
    for node in sx.nodes(ctx, "enumerator", "type_definition"):
        if node.type == "enumerator":
            name = node.child_by_field_name("name")
            if name is not None:
                yield name, sx.text(name)
            continue
        for declarator in node.children_by_field_name("declarator"):
            for leaf in sx.walk(declarator):
                if leaf.type == "type_identifier":
                    yield leaf, sx.text(leaf)


@rule(code="HP1203", name="cuda-api-declared", category="declaration-clash",
      severity="error", effort="high", triggers=(_DECLARES_CUDA_TYPE,))
def cuda_api_declared(ctx):
    """Reports a file that declares CUDA's API names itself (once per file).

    What it does:
    Flags the first enumerator or typedef name the file declares that is a CUDA API name the
    port renames (CU_CTX_SCHED_AUTO, CUcontext, cudaError_t, ...), and counts the others.

    Why it matters on AMD GPUs:
    Such a file re-declares CUDA's API, usually to load the driver at run time. The port
    renames the declarations like any use, to the HIP names that HIP's own headers declare,
    so hipcc stops on the first redefinition; and a HIP build loads HIP, not this table.

    Example:
    typedef enum CUctx_flags_enum { CU_CTX_SCHED_AUTO = 0x00, ... } CUctx_flags;

    Fix:
    Keep the file for CUDA builds only (#if !defined(__HIP_PLATFORM_AMD__)) and include
    hip/hip_runtime.h for HIP, or load HIP's runtime (libamdhip64) the same way with its own
    declarations.
    """
    names = ctx.mappings.names
    declared = [(node, name) for node, name in _declared_names(ctx) if names.get(name, name) != name]
    if not declared:
        return
    node, name = declared[0]
    more = f" (and {len(declared) - 1} more CUDA API names)" if len(declared) > 1 else ""
    yield Hit(node.start_byte, node.end_byte,
              f"this file declares CUDA's own `{name}`{more}: the port renames it to HIP's "
              f"`{names[name]}`, which HIP's headers declare too",
              "keep the file for CUDA builds only and include hip/hip_runtime.h for HIP")
