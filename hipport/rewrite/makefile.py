"""Makefiles: nvcc -> hipcc, nvcc options (architectures become --offload-arch for the default
AMD targets), -lcudart/-lcublas/... -> the ROCm libraries, CUDA install paths, and with
--rename the `.cu` names and patterns. Comments are never touched."""

from __future__ import annotations

from hipport.parse.hash_comments import comment_spans
from hipport.rewrite.shell import Rewritten, Spans, command_edits
from hipport.source import bom_length


def rewrite(data: bytes, rel: str, settings, renamed: frozenset[str], target: tuple[int, int]) -> Rewritten:
    comments = Spans(comment_spans("make", data))
    bom = bom_length(data)
    return command_edits(data, comments, start=bom, target=target, rename=settings.rename, policy="offload",
                         quote=False)  # make keeps quotes as part of a value
