#include <hip/hip_runtime.h>
#include <hip/hip_runtime_api.h>

#include <cstdio>

int main() {
    hipDevice_t device;
    if (hipInit(0) != hipSuccess || hipDeviceGet(&device, 0) != hipSuccess) {
        return 1;
    }
    int major = 0;
    hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, device);
    void* p = nullptr;
    hipMalloc(&p, 256);
    hipFree(p);
    std::printf("major %d\n", major);
    return 0;
}
