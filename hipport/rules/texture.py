"""texture-reference (legacy texture/surface references) and texture-object rules."""

from __future__ import annotations

from hipport import regexes
from hipport.patterns import name_triggers
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules._texture_text import Creation, FetchCall, ObjectDecl, Sites, read

BIND_APIS = frozenset({
    "cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray",
    "cudaBindTextureToMipmappedArray", "cudaUnbindTexture", "cudaGetTextureReference",
    "cudaGetTextureAlignmentOffset", "cudaBindSurfaceToArray", "cudaGetSurfaceReference",
    "cuTexRefSetArray", "cuTexRefSetAddress", "cuTexRefSetAddress2D", "cuTexRefSetFormat",
    "cuTexRefSetAddressMode", "cuTexRefSetFilterMode", "cuTexRefSetFlags", "cuModuleGetTexRef",
    "cuModuleGetSurfRef", "cuSurfRefSetArray",
})
REFERENCE_TYPES = frozenset({"textureReference", "surfaceReference", "CUtexref", "CUsurfref"})
TEX_FETCHES = frozenset({
    "tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered", "texCubemap",
    "texCubemapLayered", "tex2Dgather", "tex1DLod", "tex2DLod", "tex3DLod", "tex1DGrad",
    "tex2DGrad", "tex3DGrad", "tex1DLayeredLod", "tex2DLayeredLod", "tex1DLayeredGrad",
    "tex2DLayeredGrad", "texCubemapLod", "texCubemapGrad", "texCubemapLayeredLod",
    "texCubemapLayeredGrad",
})
SURF_FUNCS = frozenset({
    "surf1Dread", "surf1Dwrite", "surf2Dread", "surf2Dwrite", "surf3Dread", "surf3Dwrite",
    "surf1DLayeredread", "surf1DLayeredwrite", "surf2DLayeredread", "surf2DLayeredwrite",
    "surfCubemapread", "surfCubemapwrite", "surfCubemapLayeredread", "surfCubemapLayeredwrite",
})
OBJECT_TYPES = frozenset({"cudaTextureObject_t", "cudaSurfaceObject_t", "CUtexObject", "CUsurfObject"})
OBJECT_CREATE = frozenset({"cudaCreateTextureObject", "cudaCreateTextureObject_v2",
                           "cudaCreateSurfaceObject", "cuTexObjectCreate", "cuSurfObjectCreate"})

_REF_FIX = ("Use a texture object: create it with hipCreateTextureObject (hipResourceDesc + "
            "hipTextureDesc) on the host, pass the hipTextureObject_t to the kernel, and fetch "
            "with tex1Dfetch<T>(obj, i) / tex2D<T>(obj, x, y). If the texture only served as a "
            "read-only cache, a plain `const T* __restrict__` load (or __ldg) is enough.")


_FETCH_NAMES = TEX_FETCHES | SURF_FUNCS
_FETCH_WORDS = sx.words_finder(_FETCH_NAMES)
_LEGACY_NAMES = frozenset({"texture", "surface"})
# Only the whole word, and only where a template argument list may follow (spaces, a line
# continuation, a comment or a directive in between): prose about textures and longer names
# (`GL_ARB_texture /* ... */`) are skipped before any tree lookup.
_LEGACY_WORDS = tuple(regexes.compile(sx.word_start(word) + rb"(?=[\s\\\x80-\xff]*[<#/])")
                      for word in (b"texture", b"surface"))
_REFERENCE_WORDS = sx.words_finder(REFERENCE_TYPES)
_BIND_WORDS = sx.words_finder(BIND_APIS)
_OBJECT_WORDS = sx.words_finder(OBJECT_TYPES)
_CREATE_WORDS = sx.words_finder(OBJECT_CREATE)
_SITE_WORDS = sx.words_finder(_FETCH_NAMES | OBJECT_CREATE | OBJECT_TYPES)  # one pass for _text_sites


def _legacy_templates(ctx) -> list:
    """`texture<...>` / `surface<...>` type nodes (not a user's own `ns::texture<...>`)."""
    return sx.memo(ctx, "texture_legacy_templates", _compute_legacy_templates)


def _compute_legacy_templates(ctx) -> list:
    out = []
    for name in sx.nodes_named(ctx, _LEGACY_NAMES, _LEGACY_WORDS):
        node = name.parent  # found from its name, not by a walk over every template_type
        if node is None or node.type != "template_type" or node.child_by_field_name("name") != name:
            continue
        parent = node.parent
        if parent is not None and parent.type == "qualified_identifier":
            scope = parent.child_by_field_name("scope")
            if scope is not None:
                continue
        if sx.relevant(ctx, node.start_byte):
            out.append(node)
    return out


def _sites(ctx) -> Sites:
    """The fetch calls, creations and handle declarations: read from the text where the lexer
    is certain of them (_texture_text), else from the tree."""
    return sx.memo(ctx, "texture_sites", lambda c: _text_sites(c) or tree_sites(c))


def _text_sites(ctx) -> Sites | None:
    return read(ctx, _SITE_WORDS, _FETCH_NAMES, OBJECT_CREATE, OBJECT_TYPES)


def tree_sites(ctx) -> Sites:
    """The same records read from the tree (parsing the file where a name occurs in code)."""
    return Sites(_tree_fetch_calls(ctx), _tree_creations(ctx), _tree_object_declarations(ctx),
                 _tree_own_templates(ctx))


def _tree_own_templates(ctx) -> frozenset[str]:
    """The tex*/surf* names the file defines itself (a `tex2D` helper function, a struct or
    class of that name): found from where the names are written."""
    own = set()
    for word in sx.nodes_named(ctx, _FETCH_NAMES, _FETCH_WORDS):
        node = word  # or a node around it with the same text
        while node is not None and node.start_byte == word.start_byte \
                and node.end_byte == word.end_byte:
            if _names_definition(node):
                own.add(sx.text(word))
                break
            node = node.parent
    return frozenset(own)


def _names_definition(node) -> bool:
    """Whether `node` is the name of a struct/class with a body, or the declarator of a
    function definition's (first) function_declarator."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("struct_specifier", "class_specifier"):
        return parent.child_by_field_name("name") == node \
            and parent.child_by_field_name("body") is not None
    if parent.type != "function_declarator" or parent.child_by_field_name("declarator") != node:
        return False
    d = parent  # climb the definition's chain of declarators
    while True:
        up = d.parent
        if up is None or up.child_by_field_name("declarator") != d or up.type == "function_declarator":
            return False
        if up.type == "function_definition":
            return True
        d = up


def _references(ctx) -> dict[str, str]:
    """Texture/surface reference names declared in this file -> "texture" | "surface"."""
    def compute(c):
        out = {}
        for node in _legacy_templates(c):
            if node.parent is not None and node.parent.type in ("template_argument_list", "type_descriptor"):
                continue
            kind = sx.text(node.child_by_field_name("name"))
            for ident in sx.declared_identifiers(ctx, node):
                out[sx.text(ident)] = kind
        return out
    return sx.memo(ctx, "texture_references", compute)


def _tree_object_declarations(ctx) -> list[ObjectDecl]:
    """The declarations of texture/surface object handles."""
    # The type's last name is spelled in the text: start from those words and climb to
    # the declaration whose type holds them, instead of visiting every declaration.
    found = {}
    for word in sx.nodes_named(ctx, OBJECT_TYPES, _OBJECT_WORDS):
        for decl in sx.enclosing(ctx, word, *sx.DECLARATIONS):
            if decl.id not in found:
                t = decl.child_by_field_name("type")
                if t is not None and t.start_byte <= word.start_byte and word.end_byte <= t.end_byte:
                    name = sx.text(t).split("::")[-1].strip()
                    idents = sx.declared_identifiers(ctx, t) if name in OBJECT_TYPES else []
                    if idents:
                        found[decl.id] = ObjectDecl(decl.start_byte, t.start_byte, name, tuple(
                            (sx.text(i), i.end_byte) for i in idents))
    return sorted(found.values())


def _objects(ctx) -> set[str]:
    """Names declared in this file with a texture/surface object type."""
    return sx.memo(ctx, "texture_objects", lambda c: {
        name for d in _sites(c).decls for name, _ in d.idents})


def _tree_fetch_calls(ctx) -> list[FetchCall]:
    """Calls of the tex*/surf* functions (by their own name, whatever the qualification)."""
    return [_fetch_call(call) for call in sx.calls_named(ctx, _FETCH_NAMES, _FETCH_WORDS)]


def _fetch_call(call) -> FetchCall:
    args = sx.call_args(call)
    fn = call.child_by_field_name("function")
    return FetchCall(call.start_byte, call.end_byte, sx.call_name(call), sx.is_template_call(call),
                     fn is not None and fn.type == "identifier",
                     tuple(_first_ident(a) for a in args[:2]),
                     bool(args) and args[0].type == "pointer_expression" and len(args) > 1)


def _tree_creations(ctx) -> list[Creation]:
    """Calls of the texture/surface object creation functions, by their unqualified name."""
    out = []
    for node in sx.nodes_named(ctx, OBJECT_CREATE, _CREATE_WORDS, ("identifier",)):
        parent = node.parent
        if parent is not None and parent.type == "call_expression":
            out.append(Creation(node.start_byte, parent.start_byte, parent.end_byte, sx.text(node)))
    return out


def _first_ident(node):
    while node is not None and node.type in ("parenthesized_expression",):
        node = node.named_children[0] if node.named_child_count else None
    return sx.text(node) if node is not None and node.type == "identifier" else None


@rule(code="HP201", name="texture-reference-declaration", category="texture-reference",
      severity="error", effort="high",
      triggers=(b'texture', b'surface'))
def texture_reference_declaration(ctx):
    """Flags legacy texture and surface reference declarations.

    What it does:
    Reports `texture<T, dim, mode>` and `surface<void, dim>` declarations (file scope or
    parameters) and uses of the driver/runtime reference types `textureReference`,
    `surfaceReference`, `CUtexref`, `CUsurfref`.

    Why it matters on AMD GPUs:
    Texture and surface references were removed in CUDA 12 and HIP lists the whole texture
    reference API as deprecated (it may be dropped from a future ROCm), so the port should move
    to texture/surface objects, which both platforms support.

    Example:
    texture<float, cudaTextureType2D, cudaReadModeElementType> texImage;

    Fix:
    Replace the reference with a texture object (hipTextureObject_t) created on the host with
    hipCreateTextureObject and passed to the kernel as an argument; surfaces likewise with
    hipSurfaceObject_t / hipCreateSurfaceObject.
    """
    seen = set()
    for node in _legacy_templates(ctx):
        if node.parent is not None and node.parent.type in ("template_argument_list", "type_descriptor"):
            continue
        kind = sx.text(node.child_by_field_name("name"))
        names = ", ".join(f"`{sx.text(i)}`" for i in sx.declared_identifiers(ctx, node)) or "a reference"
        seen.add(node.start_byte)
        yield Hit(node.start_byte, node.end_byte,
                  f"legacy {kind} reference {names} (`{kind}<...>`): removed in CUDA 12, "
                  "deprecated in HIP", _REF_FIX)
    for t in sx.nodes_named(ctx, REFERENCE_TYPES, _REFERENCE_WORDS, ("type_identifier",)):
        name = sx.text(t)
        if sx.relevant(ctx, t.start_byte):
            yield Hit(t.start_byte, t.end_byte,
                      f"`{name}`: the texture/surface reference API was removed in CUDA 12 and is "
                      "deprecated in HIP", _REF_FIX)


@rule(code="HP202", name="texture-reference-binding-api", category="texture-reference",
      severity="error", effort="high",
      triggers=(b'BindTexture', b'BindSurface', b'UnbindTexture'))
def texture_reference_binding_api(ctx):
    """Flags calls that bind or query texture/surface references.

    What it does:
    Reports `cudaBindTexture`, `cudaBindTexture2D`, `cudaBindTextureToArray`,
    `cudaUnbindTexture`, `cudaBindSurfaceToArray`, `cudaGetTextureReference` and the driver
    API's `cuTexRef*`/`cuModuleGetTexRef`, in code that is compiled for CUDA.

    Why it matters on AMD GPUs:
    These functions only exist for texture references: CUDA 12 removed them, and HIP keeps
    hipBindTexture*/hipUnbindTexture only as deprecated APIs.

    Example:
    cudaBindTexture2D(nullptr, texImage, d_img, desc, w, h, pitch);

    Fix:
    Describe the memory with a hipResourceDesc (linear, pitch2D or array) and the sampling
    with a hipTextureDesc, call hipCreateTextureObject once, pass the object to the kernel and
    hipDestroyTextureObject it when done.
    """
    for node in sx.nodes_named(ctx, BIND_APIS, _BIND_WORDS, ("identifier",)):
        name = sx.text(node)
        if sx.relevant(ctx, node.start_byte):
            parent = node.parent
            if parent is not None and parent.type in ("function_declarator",):
                continue  # the file declares its own function of that name
            end = parent.end_byte if parent is not None and parent.type == "call_expression" else node.end_byte
            yield Hit(node.start_byte, end,
                      f"`{name}` binds a texture/surface reference: removed in CUDA 12, deprecated "
                      "in HIP", _REF_FIX)


@rule(code="HP203", name="texture-reference-fetch", category="texture-reference",
      severity="error", effort="high",
      triggers=name_triggers(_FETCH_NAMES))  # it reports fetch calls only
def texture_reference_fetch(ctx):
    """Flags tex*/surf* fetches through a texture or surface reference.

    What it does:
    Reports non-template `tex1Dfetch(ref, i)`, `tex2D(ref, x, y)`, ... calls whose first
    argument is a texture reference (declared in this file, or any name that is not a texture
    object since only references take the non-template form), and `surf2Dread`/`surf2Dwrite`
    calls on a surface reference declared in this file. Template fetches on texture objects
    (`tex2D<float>(obj, x, y)`) are texture-object findings instead.

    Why it matters on AMD GPUs:
    The reference overloads of the fetch functions went away with texture references in CUDA
    12 and are deprecated in HIP; the object overloads need the element type as a template
    argument.

    Example:
    float v = tex2D(texImage, x + 0.5f, y + 0.5f);

    Fix:
    Pass a hipTextureObject_t to the kernel and fetch with the template form:
    `tex2D<float>(texObj, x + 0.5f, y + 0.5f)`; surfaces: `surf2Dwrite(v, surfObj, x * sizeof(v), y)`.
    """
    sites = _sites(ctx)
    if not sites.calls:
        return
    refs = _references(ctx)
    objects = _objects(ctx)
    for call in sites.calls:
        name = call.name
        if name in sites.own or call.template or not call.plain or not sx.relevant(ctx, call.start):
            continue
        if name in TEX_FETCHES:
            first = call.idents[0] if call.idents else None
            if first is None or first in objects:
                continue
            known = first in refs
            why = "a texture reference" if known else "not a texture object (only references take the non-template form)"
            yield Hit(call.start, call.end,
                      f"`{name}({first}, ...)` fetches through {why}: texture references were "
                      "removed in CUDA 12 and are deprecated in HIP", _REF_FIX)
        else:
            for ident in call.idents:
                if ident is not None and refs.get(ident) == "surface":
                    yield Hit(call.start, call.end,
                              f"`{name}` on surface reference `{ident}`: surface references were "
                              "removed in CUDA 12 and are deprecated in HIP",
                              "Use a surface object (hipSurfaceObject_t from hipCreateSurfaceObject).")
                    break


_OBJECT_FIX = ("hipTextureObject_t/hipSurfaceObject_t work the same way; check that the channel "
               "format (e.g. 3-channel or 64-bit formats), filter mode (linear filtering of "
               "integer data), address mode (wrap/mirror need normalized coordinates) and the "
               "extents (hipDeviceProp_t::maxTexture1D/2D/3D) are supported on the target GPU, "
               "and compare results where linear filtering is used.")


@rule(code="HP251", name="texture-object-creation", category="texture-object",
      severity="info", effort="low",
      triggers=name_triggers(OBJECT_CREATE))
def texture_object_creation(ctx):
    """Notes where texture and surface objects are created.

    What it does:
    Reports `cudaCreateTextureObject`, `cudaCreateSurfaceObject` (and the driver API's
    `cuTexObjectCreate`/`cuSurfObjectCreate`): the place where format, filtering and
    addressing are chosen.

    Why it matters on AMD GPUs:
    HIP supports texture and surface objects (hipCreateTextureObject), so these port
    directly; what can differ is which formats, filter and address modes and sizes the AMD
    GPU's sampler supports, and the precision of linear filtering.

    Example:
    cudaCreateTextureObject(&tex, &resDesc, &texDesc, nullptr);

    Fix:
    Keep the object; check the channel format, filter mode, address mode and normalized
    coordinates against the target GPU, check extents against hipDeviceProp_t::maxTexture*,
    and test results that use linear filtering.
    """
    for call in _sites(ctx).creations:
        if sx.relevant(ctx, call.at):
            yield Hit(call.start, call.end,
                      f"`{call.name}`: texture/surface objects are supported by HIP; check formats, "
                      "filtering, addressing and size limits on the AMD target", _OBJECT_FIX)


@rule(code="HP252", name="texture-object-fetch", category="texture-object",
      severity="info", effort="low",
      triggers=name_triggers(_FETCH_NAMES))
def texture_object_fetch(ctx):
    """Notes texture fetches and surface accesses through objects in device code.

    What it does:
    Reports template fetches such as `tex2D<float>(obj, x, y)` / `tex1Dfetch<int>(obj, i)`,
    the pointer forms `tex2D(&v, obj, x, y)`, and `surf*read/write` calls whose object is a
    `cudaSurfaceObject_t` of this file.

    Why it matters on AMD GPUs:
    The same calls exist in HIP for hipTextureObject_t; results can still differ where the
    sampler does the work (linear filtering, normalized coordinates, border handling,
    read-mode normalization of integer data).

    Example:
    float v = tex2D<float>(tex, u, v);

    Fix:
    Nothing to rename beyond the object type; validate results against the CUDA build where
    filtering or normalized coordinates are used.
    """
    sites = _sites(ctx)
    if not sites.calls:
        return
    objects = _objects(ctx)
    refs = _references(ctx)
    for call in sites.calls:
        name = call.name
        if name in sites.own or not sx.relevant(ctx, call.start):
            continue
        if any(i in refs for i in call.idents if i):
            continue
        is_object = call.template or (call.pointer_form and name in TEX_FETCHES)
        if name in SURF_FUNCS:
            is_object = any(i in objects for i in call.idents if i)
        if is_object:
            kind = "surface" if name in SURF_FUNCS else "texture"
            yield Hit(call.start, call.end,
                      f"`{name}` through a {kind} object: supported by HIP; check formats, "
                      "filtering and addressing on the AMD target", _OBJECT_FIX)


@rule(code="HP253", name="texture-object-handle", category="texture-object",
      severity="info", effort="low",
      triggers=name_triggers(OBJECT_TYPES))
def texture_object_handle(ctx):
    """Notes declarations of texture/surface object handles.

    What it does:
    Reports variables, parameters and members declared as `cudaTextureObject_t` or
    `cudaSurfaceObject_t` (or the driver API's `CUtexObject`/`CUsurfObject`), once per
    declaration.

    Why it matters on AMD GPUs:
    They map one to one to hipTextureObject_t/hipSurfaceObject_t; the declaration marks the
    code paths whose sampling behaviour and size limits are worth checking on the AMD GPU.

    Example:
    __global__ void blur(cudaTextureObject_t src, float* dst, int w, int h);

    Fix:
    Rename to hipTextureObject_t / hipSurfaceObject_t (hipport does this); check the creating
    code's formats and filter modes against the target GPU.
    """
    for decl in _sites(ctx).decls:
        if not sx.relevant(ctx, decl.start):
            continue
        listed = ", ".join(f"`{name}`" for name, _ in decl.idents)
        yield Hit(decl.type_start, decl.idents[-1][1],
                  f"{listed} declared as `{decl.type_name}`: texture/surface objects are supported by HIP; "
                  "check formats, filtering and limits on the AMD target", _OBJECT_FIX)
