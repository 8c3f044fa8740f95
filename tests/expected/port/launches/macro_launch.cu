#include <hip/hip_runtime.h>

__global__ void increment(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

#define BLOCK 256
#define LAUNCH_1D(kernel, n, ...) hipLaunchKernelGGL(kernel, dim3(((n) + BLOCK - 1) / BLOCK), dim3(BLOCK), 0, 0, __VA_ARGS__)

#define LAUNCH_ON_STREAM(kernel, n, stream, ...)                         \
    do {                                                                 \
        hipLaunchKernelGGL(kernel, dim3(((n) + BLOCK - 1) / BLOCK), dim3(BLOCK), 0, (stream),        \
            __VA_ARGS__);                                                \
        hipError_t launch_err_ = hipGetLastError();                    \
        (void)launch_err_;                                               \
    } while (0)

void run(int* data, int n, hipStream_t stream) {
    LAUNCH_1D(increment, n, data, n);
    LAUNCH_ON_STREAM(increment, n, stream, data, n);
    hipStreamSynchronize(stream);
}
