#include <hip/hip_runtime.h>

#define FULL_MASK 0xffffffff

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffffffffffULL, v, offset);
    return v;
}

__device__ int broadcast(int v, unsigned mask) {
    return __shfl_sync(mask, v, 0);
}

__global__ void vote(const int* in, unsigned long long* out, float* sums) {
    int x = in[threadIdx.x];
    unsigned active = __activemask();
    unsigned long long ballot = __ballot_sync(0xffffffffffffffffULL, x > 0);
    if (__any_sync(FULL_MASK, x < 0) && __all_sync(active, x != 0)) x = -x;
    __builtin_amdgcn_wave_barrier();
    x += __shfl_xor_sync(0xffffffffffffffffULL, x, 1) + __shfl_up_sync(0xffffffffffffffffULL, x, 1, 16);
    __builtin_amdgcn_wave_barrier();
    sums[threadIdx.x] = warp_sum(static_cast<float>(broadcast(x, active)));
    out[threadIdx.x] = ballot;
}
