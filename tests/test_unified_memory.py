"""Rule HP1002 on CUDA 13's prefetch and advice calls: a memory location where HIP takes a
device ordinal is an error; the older device form stays a warning about page migration."""

from __future__ import annotations

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import Settings


def hint_findings(body: str):
    code = ("#include <cuda_runtime.h>\n"
            "void f(float* p, size_t n, int dev, cudaStream_t s) {\n"
            "    cudaMemLocation loc = {cudaMemLocationTypeDevice, dev}, other;\n" + body + "}\n").encode()
    return [f for f in analyze(context_for(code, "f.cu", "cuda", Settings())) if f.rule == "HP1002"]


@pytest.mark.parametrize("call, severity", [
    ("cudaMemPrefetchAsync(p, n, loc, 0, s);", "error"),  # five arguments: only CUDA 13 has them
    ("cudaMemPrefetchAsync(p, n, other, 0);", "error"),  # a declared location, the stream defaulted
    ("cudaMemPrefetchAsync(p, n, dev, s);", "warning"),  # the device form, HIP's too
    ("cudaMemPrefetchAsync(p, n, dev);", "warning"),
    ("cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, loc);", "error"),
    ("cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, {cudaMemLocationTypeDevice, dev});", "error"),
    ("cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, dev);", "warning"),
    ("cudaMemAdvise(p, n, cudaMemAdviseSetAccessedBy, location_of(dev));", "warning"),  # unknown: the older form
])
def test_the_location_form_is_an_error(call, severity):
    found = hint_findings(f"    {call}\n")
    assert [f.severity for f in found] == [severity]
    assert ("memory location" in found[0].message) == (severity == "error")
    if severity == "error":
        assert "hipCpuDeviceId" in found[0].suggestion
        assert ("flags" in found[0].suggestion) == call.startswith("cudaMemPrefetchAsync")
