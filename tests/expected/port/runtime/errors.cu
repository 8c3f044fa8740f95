#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }

static bool ok(hipError_t err, const char* where) {
    if (err == hipSuccess) return true;
    std::fprintf(stderr, "%s: %s (%s)\n", where, hipGetErrorString(err), hipGetErrorName(err));
    return false;
}

int main() {
    int* p = nullptr;
    hipError_t err = hipMalloc(&p, 64 * sizeof(int));
    if (err == hipErrorOutOfMemory) return 2;
    if (!ok(err, "alloc")) return 1;

    fill<<<1, 64>>>(p, 7);
    if (!ok(hipPeekAtLastError(), "launch (peek)")) return 1;
    if (!ok(hipGetLastError(), "launch")) return 1;
    if (!ok(hipDeviceSynchronize(), "sync")) return 1;

    err = hipFree(p);
    if (err != hipSuccess && err != hipErrorInvalidValue) return 1;
    return 0;
}
