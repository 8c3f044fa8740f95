#include <hip/hip_runtime.h>

struct Stats {
    int atomicAdd_block;  // a member named like the intrinsic stays
    unsigned bits;
};

// Fast-math intrinsics, bit tricks, read-only loads and block-scope atomics.
__global__ void features(const float* __restrict__ x, float* y, unsigned* hist, int* block_max,
                         Stats* stats, int n) {
    __shared__ int local_count;
    if (threadIdx.x == 0) local_count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __ldg(&x[i]);
        float s = __saturatef(__fdividef(__expf(v), 1.0f + __expf(v)));
        y[i] = s * rsqrtf(1.0f + __sinf(v) * __sinf(v));
        unsigned b = __float_as_uint(v);
        unsigned rot = __funnelshift_l(b, b, 7);
        atomicAdd(&hist[__popc(__brev(rot)) & 31], 1u);
        atomicAdd(&local_count, 1);
        atomicMax(block_max, __float2int_rn(s * 100.0f));
        __threadfence_block();
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(32);  // no HIP equivalent: left as written, reported
#endif
    __syncthreads();
    if (threadIdx.x == 0) {
        stats[blockIdx.x].atomicAdd_block = local_count;
        stats[blockIdx.x].bits = __umulhi(static_cast<unsigned>(local_count), 0x9e3779b9u);
    }
}
