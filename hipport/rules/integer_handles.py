"""library-semantics: arithmetic on a CUDA handle that is an integer in CUDA and a pointer in HIP.

CUDA's CUdeviceptr and its texture and surface objects are unsigned integers; the port renames
them to hipDeviceptr_t (`void *`), hipTextureObject_t and hipSurfaceObject_t (pointers to
incomplete structs). Offsets added to them, masks and shifts taken of them, then stop
compiling. The rule knows such a value from its declaration in the same file, in the same
function or at file scope (a variable, parameter or member of the type, or a pointer to or
array of them, dereferenced or indexed), or from a cast to the type.
"""

from __future__ import annotations

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
# What a handle operand can be: `h`, `(h)`, `*ph`, `a[i]`, `s.h`, `(T)x`.
_OPERAND_TYPES = frozenset({"identifier", "parenthesized_expression", "pointer_expression",
                            "subscript_expression", "field_expression", "cast_expression"})
_DECLARATOR_TYPES = ("init_declarator", "pointer_declarator", "array_declarator", "reference_declarator")
_NOT_DECLARED = (-1, "")


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


def _handle_type(node, declared, scope: int) -> str:
    """The CUDA handle type an operand has ("" when it is none the file shows)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_children[0]
    if node is not None and node.type == "cast_expression":
        kind = sx.text(node.child_by_field_name("type"))
        return kind if kind in HANDLE_TYPES else ""
    depth = 0
    while node is not None and node.type in ("pointer_expression", "subscript_expression"):
        if node.type == "pointer_expression" and node.child_by_field_name("operator").type != "*":
            return ""  # `&h`
        node, depth = node.child_by_field_name("argument"), depth + 1
    if node is not None and node.type == "field_expression":
        field = node.child_by_field_name("field")
        found = declared.get((sx.text(field), 0), _NOT_DECLARED) if field is not None else _NOT_DECLARED
    elif node is not None and node.type == "identifier":
        name = sx.text(node)
        found = declared.get((name, scope)) or declared.get((name, 0), _NOT_DECLARED)
    else:
        return ""
    return found[1] if found[0] == depth else ""


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
    declared = sx.memo(ctx, "integer_handles.declared", _declared)
    casts = b"(CUdeviceptr)" in ctx.data or b"Object_t)" in ctx.data or b"Object)" in ctx.data
    if not declared and not casts:
        return
    c_file = ctx.path.endswith(".c")
    found = []
    for node in sx.nodes(ctx, "binary_expression", "assignment_expression", "update_expression"):
        operator = node.child_by_field_name("operator")
        op = operator.type if operator is not None else ""
        if node.type == "binary_expression":
            if op not in ARITHMETIC:
                continue
            operands = (node.child_by_field_name("left"), node.child_by_field_name("right"))
        elif node.type == "assignment_expression":
            if op not in _COMPOUND:
                continue
            operands = (node.child_by_field_name("left"),)
        else:
            operands = (node.child_by_field_name("argument"),)
        if not any(o is not None and o.type in _OPERAND_TYPES for o in operands):
            continue
        scope = None
        for o in operands:
            if o is None or o.type not in _OPERAND_TYPES:
                continue
            if scope is None:
                scope = _scope(ctx, node)
            kind = _handle_type(o, declared, scope)
            if kind and not (c_file and op in ADDITIVE and HANDLE_TYPES[kind] == "void") \
                    and sx.relevant(ctx, node.start_byte):
                found.append((node, kind))
                break
    spans = [(n.start_byte, n.end_byte, n.id) for n, _ in found]
    for node, kind in found:
        if any(s <= node.start_byte and node.end_byte <= e and i != node.id for s, e, i in spans):
            continue  # one finding for `base + a + b`
        pointee = HANDLE_TYPES[kind]
        yield Hit(node.start_byte, node.end_byte,
                  f"arithmetic on a {kind} (`{sx.text(node)}`): an integer in CUDA, but a "
                  f"`{pointee} *` in HIP, which C++ does no arithmetic on",
                  "compute on bytes, `(hipDeviceptr_t)((char *)p + n)`, or on an integer, "
                  "`(hipDeviceptr_t)((uintptr_t)p + n)`" if pointee == "void" else
                  "convert it to uintptr_t first, `(uintptr_t)obj >> 32`, and back with a cast")
