"""Makefiles: nvcc -> hipcc, nvcc options (architectures become --offload-arch for the default
AMD targets), -lcudart/-lcublas/... -> the ROCm libraries, CUDA install paths, and with
--rename the `.cu` names and patterns. Comments are never touched."""

from __future__ import annotations

from hipport.rewrite.shell import Rewritten, command_edits
from hipport.source import bom_length


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    data = ctx.data
    return command_edits(data, ctx.comment_index, start=bom_length(data), target=ctx.mappings.target_hip,
                         rename=ctx.settings.rename, policy="offload", quote=False)  # make keeps quotes in values
