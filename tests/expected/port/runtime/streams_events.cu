#include <hip/hip_runtime.h>

__global__ void touch(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0f;
}

float run(float* host, float* dev, int n) {
    hipStream_t copy_stream, compute_stream;
    hipStreamCreate(&copy_stream);
    hipStreamCreateWithFlags(&compute_stream, hipStreamNonBlocking);

    hipEvent_t start, stop, copied;
    hipEventCreate(&start);
    hipEventCreateWithFlags(&stop, hipEventBlockingSync);
    hipEventCreateWithFlags(&copied, hipEventDisableTiming);

    hipEventRecord(start, copy_stream);
    hipMemcpyAsync(dev, host, n * sizeof(float), hipMemcpyHostToDevice, copy_stream);
    hipEventRecord(copied, copy_stream);
    hipStreamWaitEvent(compute_stream, copied, 0);
    touch<<<(n + 255) / 256, 256, 0, compute_stream>>>(dev, n);
    hipEventRecord(stop, compute_stream);
    hipStreamWaitEvent(copy_stream, stop, 0);  // flags default to 0 in CUDA, not in HIP 5.2

    while (hipEventQuery(stop) == hipErrorNotReady) {
    }
    hipEventSynchronize(stop);
    hipStreamSynchronize(copy_stream);

    float ms = 0.0f;
    hipEventElapsedTime(&ms, start, stop);
    hipEventDestroy(start);
    hipEventDestroy(stop);
    hipEventDestroy(copied);
    hipStreamDestroy(copy_stream);
    hipStreamDestroy(compute_stream);
    return ms;
}
