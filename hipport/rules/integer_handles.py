"""library-semantics: arithmetic on a CUDA handle that is an integer in CUDA and a pointer in HIP.

CUDA's CUdeviceptr and its texture and surface objects are unsigned integers; the port renames
them to hipDeviceptr_t (`void *`), hipTextureObject_t and hipSurfaceObject_t (pointers to
incomplete structs). Offsets added to them, masks and shifts taken of them, then stop
compiling. The rule knows such a value from its declaration in the same file, in the same
function or at file scope (a variable, parameter or member of the type, or a pointer to or
array of them, dereferenced or indexed), or from a cast to the type.
"""

from __future__ import annotations

from hipport import regexes
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

# CUDA's integer type -> what HIP's type for it points to (hip/driver_types.h,
# hip/texture_types.h, hip/surface_types.h; HIP 5.2 to 6.2).
HANDLE_TYPES = {
    "CUdeviceptr": "void", "CUdeviceptr_v2": "void",
    "cudaTextureObject_t": "struct __hip_texture", "CUtexObject": "struct __hip_texture",
    "cudaSurfaceObject_t": "struct __hip_surface", "CUsurfObject": "struct __hip_surface",
}
# The operators C++ refuses on such pointers. On `void *`, `+`/`-` with an integer are a GNU
# extension in C that counts bytes, as CUDA's integer does: in a .c file they are not reported.
ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})
ADDITIVE = frozenset({"+", "-", "+=", "-=", "++", "--"})
_COMPOUND = frozenset(op + "=" for op in ARITHMETIC)
_DECLARATOR_TYPES = ("init_declarator", "pointer_declarator", "array_declarator", "reference_declarator")
_NOT_DECLARED = (-1, "")
_HANDLE_WORDS = tuple(t.encode() for t in HANDLE_TYPES)

# The text pre-check (the tree is asked only where it passes; most files with texture objects
# do no arithmetic on them): an operator just after a name, or just before it (not a launch's
# `>>>`), and a cast to a handle type whose operand an operator follows. `&h`, `*h`, `a->b`
# do not count.
_OPERATOR_AFTER = regexes.compile(rb"[\s)\]]*(?:\+|-(?!>)|[*/%^]|&(?!&)|\|(?!\|)|<<|>>)")
_OPERATOR_BEFORE = regexes.compile(rb"(?:[-+/%^|]|<<|(?<!>)>>(?!>))[\s(]*\Z")
_CAST_THEN_OPERATOR = regexes.compile(
    rb"\(\s*(?:" + b"|".join(_HANDLE_WORDS) + rb")\s*\)\s*"
    rb"(?:\w+(?:(?:\.|->)\w+)*|\([^()]*\))\s*\)?\s*(?:[-+*/%^|&]|<<|>>)")
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# The name a declaration with a handle type declares (or a function's, which does no harm).
_NAME_AFTER_TYPE = regexes.compile(rb"(?:\s|const\b|[*&])*([A-Za-z_]\w*)")


def _may_do_arithmetic(ctx) -> bool:
    """Whether a name that follows a handle type somewhere (as a declared name does) stands next
    to an arithmetic operator in code, or a cast to a handle type has an operator after its
    operand."""
    data, skip = ctx.data, ctx.lexed.in_comment_or_string
    names = set()
    for kind in _HANDLE_WORDS:
        at = data.find(kind)
        while at >= 0:
            m = _NAME_AFTER_TYPE.match(data, at + len(kind))
            if m is not None:
                names.add(m.group(1))
            at = data.find(kind, at + len(kind))
    # Each name's whole-word places, found with bytes.find: a pattern compiled per name would
    # cost more than the search (and names are the project's, not patterns to keep).
    size = len(data)
    for name in names:
        at = data.find(name)
        while at >= 0:
            end = at + len(name)
            if (end == size or data[end] not in _WORD_BYTES) and (at == 0 or data[at - 1] not in _WORD_BYTES) \
                    and (_OPERATOR_AFTER.match(data, end) or _OPERATOR_BEFORE.search(data[max(0, at - 8) : at])) \
                    and not skip(at):
                return True
            at = data.find(name, end)
    return any(not skip(m.start()) for m in _CAST_THEN_OPERATOR.finditer(data))


def _scope(ctx, node) -> int:
    """The function a node is in (its id), or 0 at file scope and in a struct."""
    fn = next(sx.enclosing(ctx, node, "function_definition"), None)
    return fn.id if fn is not None else 0


def _declared(ctx) -> dict[tuple[str, int], tuple[int, str]]:
    """(name, scope) -> (how many `*`/`[]` stand between the name and a handle, 0 where it is
    one, or -1 where the scope also declares it otherwise; the CUDA type). Members are keyed
    by scope 0."""
    out: dict[tuple[str, int], tuple[int, str]] = {}
    for node in sx.nodes_named(ctx, HANDLE_TYPES, types=("type_identifier",)):
        for ident in sx.declared_identifiers(ctx, node):
            depth, up = 0, ident.parent
            while up is not None and up.type in _DECLARATOR_TYPES:
                depth += up.type in ("pointer_declarator", "array_declarator")
                up = up.parent
            key = (sx.text(ident), 0 if ident.type == "field_identifier" else _scope(ctx, ident))
            found = (depth, sx.text(node))
            out[key] = found if out.get(key, found) == found else _NOT_DECLARED
    for key in _declared_otherwise(ctx, {name for name, _ in out}):
        out[key] = _NOT_DECLARED
    return out


def _declared_otherwise(ctx, names: set[str]) -> set[tuple[str, int]]:
    """(name, scope) of those of `names` that a declaration with another type declares."""
    out = set()
    for ident in sx.nodes_named(ctx, names, types=("identifier", "field_identifier")):
        decl = next(sx.enclosing(ctx, ident, *sx.DECLARATIONS), None)
        if decl is None or not any(d.id == ident.id for d in sx.declared_identifiers(ctx, decl)):
            continue
        kind = decl.child_by_field_name("type")
        if kind is not None and sx.text(kind) not in HANDLE_TYPES:
            out.add((sx.text(ident), 0 if ident.type == "field_identifier" else _scope(ctx, ident)))
    return out


def _operand(node):
    """The operand a name or a cast stands in, climbing `(h)`, `*h`, `a[i]`, `s.h` (with how
    many `*`/`[]` were crossed), or None where it is something else (`&h`, a call argument
    seen from inside, the index of `a[h]`)."""
    depth = 0
    while True:
        up = node.parent
        if up is None:
            return None, 0
        if up.type == "parenthesized_expression":
            pass
        elif up.type == "field_expression" and up.child_by_field_name("field") == node:
            pass
        elif up.type == "pointer_expression" and up.child_by_field_name("operator").type == "*":
            depth += 1
        elif up.type == "subscript_expression" and up.child_by_field_name("argument") == node:
            depth += 1
        else:
            return node, depth
        node = up


def _arithmetic(node):
    """The arithmetic expression `node` is an operand of, or None."""
    up = node.parent
    if up is None or up.type not in ("binary_expression", "assignment_expression", "update_expression"):
        return None
    operator = up.child_by_field_name("operator")
    op = operator.type if operator is not None else ""
    if up.type == "binary_expression":
        return up if op in ARITHMETIC else None
    if up.type == "assignment_expression":
        return up if op in _COMPOUND and up.child_by_field_name("left") == node else None
    return up


def _uses(ctx, declared) -> list:
    """(arithmetic expression, CUDA type) for each handle that is an operand of one: a declared
    name (by its scope: the function's own declaration, else the file's) or a cast to a type."""
    out = []
    for ident in sx.nodes_named(ctx, {name for name, _ in declared}, types=("identifier", "field_identifier")):
        operand, depth = _operand(ident)
        expr = _arithmetic(operand) if operand is not None else None
        if expr is None:
            continue
        name = sx.text(ident)
        found = declared.get((name, 0), _NOT_DECLARED) if ident.type == "field_identifier" else \
            declared.get((name, _scope(ctx, ident))) or declared.get((name, 0), _NOT_DECLARED)
        if found[0] == depth:
            out.append((expr, found[1]))
    for kind in sx.nodes_named(ctx, HANDLE_TYPES, types=("type_identifier",)):
        descriptor = kind.parent
        cast = descriptor.parent if descriptor is not None and descriptor.type == "type_descriptor" else None
        if cast is not None and cast.type == "cast_expression":
            operand, depth = _operand(cast)
            expr = _arithmetic(operand) if operand is not None and depth == 0 else None
            if expr is not None:
                out.append((expr, sx.text(kind)))
    return out


@rule(code="HP958", name="integer-handle-arithmetic", category="library-semantics",
      severity="error", effort="low",
      triggers=(b"CUdeviceptr", b"TextureObject_t", b"SurfaceObject_t", b"CUtexObject", b"CUsurfObject"))
def integer_handle_arithmetic(ctx):
    """Reports arithmetic on a CUdeviceptr or a texture or surface object, which HIP's types,
    pointers, do not allow.

    What it does:
    Flags `+`, `-`, `%`, `&`, `|`, shifts and the compound and increment forms where an
    operand is a CUdeviceptr, cudaTextureObject_t, cudaSurfaceObject_t, CUtexObject or
    CUsurfObject: a variable, parameter or member declared so in the same function or at file
    scope (or a dereferenced pointer to one, or an element of an array of them), or a cast to
    the type. A name that scope also declares with another type is left alone. In a .c file,
    `+` and `-` on a CUdeviceptr are not reported: C compilers accept them on `void *` as a
    GNU extension that counts bytes, as CUDA's integer does.

    Why it matters on AMD GPUs:
    CUDA's types are unsigned integers, so code offsets device addresses (`base + offset`)
    and packs texture objects into integers (`obj >> 32`); the port renames them to
    hipDeviceptr_t (`void *`), hipTextureObject_t and hipSurfaceObject_t (pointers to
    incomplete structs), and hipcc rejects arithmetic on them.

    Example:
    CUdeviceptr base;
    cuMemAlloc(&base, 2 * size);
    CUdeviceptr second = base + size;

    Fix:
    Do device-address arithmetic on bytes, `(hipDeviceptr_t)((char *)base + size)`, or on an
    integer, `(hipDeviceptr_t)((uintptr_t)base + size)`; convert a texture or surface object
    to `uintptr_t` before taking it apart, and back with a cast when rebuilding it.
    """
    if not _may_do_arithmetic(ctx):
        return
    declared = _declared(ctx)
    c_file = ctx.path.endswith(".c")
    found = {}
    for expr, kind in _uses(ctx, declared):
        op = expr.child_by_field_name("operator").type
        if expr.id not in found and not (c_file and op in ADDITIVE and HANDLE_TYPES[kind] == "void") \
                and sx.relevant(ctx, expr.start_byte):
            found[expr.id] = (expr, kind)
    spans = [(n.start_byte, n.end_byte, i) for i, (n, _) in found.items()]
    for i, (node, kind) in sorted(found.items(), key=lambda f: f[1][0].start_byte):
        if any(s <= node.start_byte and node.end_byte <= e and j != i for s, e, j in spans):
            continue  # one finding for `base + a + b`
        pointee = HANDLE_TYPES[kind]
        yield Hit(node.start_byte, node.end_byte,
                  f"arithmetic on a {kind} (`{sx.text(node)}`): an integer in CUDA, but a "
                  f"`{pointee} *` in HIP, which C++ does no arithmetic on",
                  "compute on bytes, `(hipDeviceptr_t)((char *)p + n)`, or on an integer, "
                  "`(hipDeviceptr_t)((uintptr_t)p + n)`" if pointee == "void" else
                  "convert it to uintptr_t first, `(uintptr_t)obj >> 32`, and back with a cast")
