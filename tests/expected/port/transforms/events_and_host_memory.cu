#include <hip/hip_runtime.h>

// cudaEventCreate has a C++ overload taking flags; cudaMallocHost takes no flags.
float time_copy(float* dev, int n) {
    hipEvent_t start, stop, marker;
    hipEventCreate(&start);
    hipEventCreateWithFlags(&stop, hipEventBlockingSync);
    hipEventCreateWithFlags(&marker,
                    hipEventDisableTiming);
    float* pinned = nullptr;
    hipHostMalloc(&pinned, n * sizeof(float), hipHostMallocDefault);
    hipHostMalloc((void**)&pinned, n * sizeof(float), hipHostMallocDefault);
    hipEventRecord(start);
    hipMemcpy(pinned, dev, n * sizeof(float), hipMemcpyDeviceToHost);
    hipEventRecord(stop);
    hipEventSynchronize(stop);
    float ms = 0.0f;
    hipEventElapsedTime(&ms, start, stop);
    hipHostFree(pinned);
    hipEventDestroy(marker);
    hipEventDestroy(stop);
    hipEventDestroy(start);
    return ms;
}
