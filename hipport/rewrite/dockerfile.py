"""Dockerfiles: NVIDIA base images -> ROCm images (mappings/build_files/docker_images.tsv), and the
shell rewrites (tools, nvcc options, paths, PyTorch wheel indexes, TORCH_CUDA_ARCH_LIST ->
PYTORCH_ROCM_ARCH) in RUN, ENV and ARG instructions. Comment lines stay as they are."""

from __future__ import annotations

import functools
import re

from hipport import regexes
from hipport.edits import Edit
from hipport.parse.lexer import logical_end
from hipport.rewrite.shell import Rewritten, command_edits, rocm_release, table, word_edits
from hipport.source import bom_length

# One instruction: its keyword and where its arguments start; continued lines end in `\`.
_INSTRUCTION = regexes.compile(rb"[ \t]*([A-Za-z]+)[ \t]+")
_FROM = regexes.compile(rb"((?:--[\w-]+=\S+[ \t]+)*)([\w./:-]+?)(?::([\w.-]+))?(?:@\S+)?(?=[ \t]|\r?$)", re.M)


@functools.lru_cache(maxsize=None)
def _images() -> tuple[dict[str, str], ...]:
    return table("docker_images")


def base_image(image: str, tag: str, target: tuple[int, int]) -> tuple[str, str] | None:
    """(ROCm image, note) for an NVIDIA base image, or None."""
    bare = image[len("docker.io/"):] if image.startswith("docker.io/") else image
    for row in _images():
        if row["image"] == bare and row["tag"] in tag:
            return row["rocm"].replace("{rocm}", rocm_release(target)), row["note"]
    return None


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    data, settings, target = ctx.data, ctx.settings, ctx.mappings.target_hip
    comments = ctx.comment_index
    out = Rewritten()
    pos = bom_length(data)
    while pos < len(data):
        m = _INSTRUCTION.match(data, pos)
        if m is None or comments.covers(m.start(1)):
            nl = data.find(b"\n", pos)
            pos = len(data) if nl < 0 else nl + 1
            continue
        keyword = m.group(1).upper()
        end = logical_end(data, m.end(), at_newline=True)  # continuation lines included
        pos = end + 1
        if keyword == b"FROM":
            out.extend(_from(data, m.end(), end, target))
        elif keyword in (b"RUN", b"CMD", b"ENTRYPOINT", b"HEALTHCHECK"):
            out.extend(command_edits(data, comments, start=m.end(), end=end, target=target,
                                     rename=settings.rename))
        elif keyword in (b"ENV", b"ARG"):
            out.extend(word_edits(data, comments, start=m.end(), end=end, target=target))
            if keyword == b"ARG":
                out.extend(_arg_image(data, m.end(), end, target))
    return out


_ARG_IMAGE = regexes.compile(rb"\w+=([\w./-]+):([\w.-]+)(?=\s|$)")


def _arg_image(data: bytes, start: int, end: int, target: tuple[int, int]) -> Rewritten:
    """`ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04` (a base image chosen by a build argument)."""
    out = Rewritten()
    m = _ARG_IMAGE.match(data, start, end)
    if m is None:
        return out
    found = base_image(m.group(1).decode(), m.group(2).decode(), target)
    if found is not None:
        old = data[m.start(1) : m.end(2)].decode()
        out.edits.append(Edit(m.start(1), m.end(2), found[0].encode(), "docker-image", old))
        out.note(m.start(1), f"base image `{old}` -> `{found[0]}`: {found[1]}")
    return out


def _from(data: bytes, start: int, end: int, target: tuple[int, int]) -> Rewritten:
    out = Rewritten()
    m = _FROM.match(data, start, end)
    if m is None:
        return out
    image = m.group(2).decode()
    tag = (m.group(3) or b"latest").decode()
    found = base_image(image, tag, target)
    if found is None:
        if "nvidia" in image or "cuda" in tag:
            out.note(m.start(2), f"base image `{image}:{tag}` looks NVIDIA-specific: choose a ROCm image "
                                 "(rocm/dev-ubuntu-22.04, rocm/pytorch)")
        return out
    new, note = found
    old_end = m.end()
    old = data[m.start(2) : old_end].decode()
    out.edits.append(Edit(m.start(2), old_end, new.encode(), "docker-image", old))
    out.note(m.start(2), f"base image `{old}` -> `{new}`: {note}; run the container with "
                         "--device=/dev/kfd --device=/dev/dri")
    return out
