#include <hip/hip_runtime.h>

__constant__ float coeffs[16];
__device__ int counter;

__global__ void apply(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= coeffs[i % 16];
    if (i == 0) atomicAdd(&counter, 1);
}

int upload(const float* host, hipStream_t stream) {
    hipMemcpyToSymbol(HIP_SYMBOL(coeffs), host, sizeof(coeffs));
    hipMemcpyToSymbolAsync(HIP_SYMBOL(coeffs), host, 4 * sizeof(float), 0, hipMemcpyHostToDevice, stream);
    int value = 0;
    hipMemcpyFromSymbol(&value, HIP_SYMBOL(counter), sizeof(int));
    void* where = nullptr;
    size_t bytes = 0;
    hipGetSymbolAddress(&where, HIP_SYMBOL(counter));
    hipGetSymbolSize(&bytes, HIP_SYMBOL(coeffs));
    return value + static_cast<int>(bytes);
}
