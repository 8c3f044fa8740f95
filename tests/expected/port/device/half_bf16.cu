#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#if defined(CUDART_VERSION) && CUDART_VERSION >= 11000
#include <hip/hip_bf16.h>
#define HAVE_BF16 1
#endif

// fp16: y = a * x + y, two lanes at a time, with a scalar tail.
__global__ void haxpy(__half a, const __half2* x, __half2* y, const __half* xt, __half* yt, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __half2half2(a);
    if (i < n2) y[i] = __hfma2(a2, x[i], y[i]);
    if (i == 0) yt[0] = __hadd(__hmul(a, xt[0]), yt[0]);
}

__global__ void to_float(const __half* h, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) f[i] = __half2float(h[i]) + __low2float(__floats2half2_rn(1.0f, 2.0f));
}

#ifdef HAVE_BF16
// bfloat16: round float to bf16 and back, also through a bf16 pair.
__global__ void round_bf16(const float* in, __hip_bfloat16* mid, __hip_bfloat162* pairs, float* out,
                           int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __hip_bfloat16 b = __float2bfloat16(in[i]);
    mid[i] = __hadd(b, __float2bfloat16(0.0f));
    pairs[i] = __halves2bfloat162(b, b);
    out[i] = __bfloat162float(__high2bfloat16(pairs[i]));
}
#endif

__half host_half(float v) { return __float2half(v); }
