#include <hip/hip_runtime.h>
#include <hip/hip_runtime_api.h>
#include <hiprand/hiprand.h>
#include <hip/hip_fp16.h>

#include <cstdio>

__global__ void to_half(const float* in, __half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2half(in[i]);
}

int main() {
    const int n = 1024;
    float* x = nullptr;
    __half* h = nullptr;
    hipMalloc(&x, n * sizeof(float));
    hipMalloc(&h, n * sizeof(__half));
    hiprandGenerator_t gen;
    hiprandCreateGenerator(&gen, HIPRAND_RNG_PSEUDO_DEFAULT);
    hiprandGenerateUniform(gen, x, n);
    to_half<<<(n + 127) / 128, 128>>>(x, h, n);
    hipDeviceSynchronize();
    hiprandDestroyGenerator(gen);
    hipFree(h);
    hipFree(x);
    std::printf("done\n");
    return 0;
}
