#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

int main() {
    const size_t n = 1 << 16;
    const size_t bytes = n * sizeof(float);
    std::vector<float> host(n, 1.0f);

    size_t free_bytes = 0, total_bytes = 0;
    hipMemGetInfo(&free_bytes, &total_bytes);

    float* dev = nullptr;
    float* copy = nullptr;
    if (hipMalloc(&dev, bytes) != hipSuccess) return 1;
    hipMalloc((void**)&copy, bytes);
    hipMemset(dev, 0, bytes);
    hipMemcpy(dev, host.data(), bytes, hipMemcpyHostToDevice);
    hipMemcpy(copy, dev, bytes, hipMemcpyDeviceToDevice);
    hipMemcpy(host.data(), copy, bytes, hipMemcpyDeviceToHost);
    hipMemcpy(copy, dev, bytes, hipMemcpyDefault);

    float* pinned = nullptr;
    hipHostMalloc(&pinned, bytes, hipHostMallocDefault);
    hipMemcpy(pinned, dev, bytes, hipMemcpyDeviceToHost);
    hipHostFree(pinned);

    hipFree(copy);
    hipFree(dev);
    std::printf("%zu of %zu bytes free, host[0] = %f\n", free_bytes, total_bytes, host[0]);
    return 0;
}
