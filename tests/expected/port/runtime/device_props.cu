#include <hip/hip_runtime.h>

#include <cstdio>

int main() {
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
        std::printf("no device\n");
        return 1;
    }
    int runtime_version = 0, driver_version = 0;
    hipRuntimeGetVersion(&runtime_version);
    hipDriverGetVersion(&driver_version);

    for (int dev = 0; dev < count; ++dev) {
        hipSetDevice(dev);
        hipDeviceProp_t prop;
        hipGetDeviceProperties(&prop, dev);
        int sms = 0;
        hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, dev);
        std::printf("%d: %s, %d SMs (%d), %zu bytes global, %zu shared/block, warp %d\n", dev,
                    prop.name, prop.multiProcessorCount, sms, prop.totalGlobalMem,
                    prop.sharedMemPerBlock, prop.warpSize);
        std::printf("   max threads/block %d, grid %d x %d x %d\n", prop.maxThreadsPerBlock,
                    prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]);
    }
    int current = -1;
    hipGetDevice(&current);
    hipDeviceReset();
    std::printf("runtime %d, driver %d, current %d\n", runtime_version, driver_version, current);
    return 0;
}
