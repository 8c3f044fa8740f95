// Device helpers; no includes, relies on the includer for the runtime.
#ifndef HEADER_GUARD_CUH
#define HEADER_GUARD_CUH
#include <hip/hip_runtime.h>

__device__ __forceinline__ int global_thread_id() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

template <typename T>
__device__ inline T clamp_value(T v, T lo, T hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

#endif  // HEADER_GUARD_CUH
