#include <hip/hip_runtime.h>

#include <cstdio>

// Driver API bring-up: device, primary context, a module from disk, a copy round trip.
int driver_roundtrip(const char* path, float* host, size_t n) {
    hipError_t r = hipInit(0);
    if (r != hipSuccess) return 1;
    int count = 0, version = 0;
    hipGetDeviceCount(&count);
    hipDriverGetVersion(&version);
    hipDevice_t dev;
    hipDeviceGet(&dev, 0);
    char name[128];
    hipDeviceGetName(name, sizeof(name), dev);
    int sms = 0;
    hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, dev);

    hipCtx_t ctx;
    hipDevicePrimaryCtxRetain(&ctx, dev);
    hipCtxSetCurrent(ctx);
    hipModule_t module;
    if (hipModuleLoad(&module, path) != hipSuccess) return 2;
    hipStream_t stream;
    hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);

    hipDeviceptr_t buf;
    hipMalloc(&buf, n * sizeof(float));
    hipMemcpyHtoD(buf, host, n * sizeof(float));
    hipMemcpyDtoH(host, buf, n * sizeof(float));
    hipCtxSynchronize();
    std::printf("%s: %d SMs, driver %d, cuMemAlloc ok\n", name, sms, version);

    hipFree(buf);
    hipStreamDestroy(stream);
    hipModuleUnload(module);
    hipDevicePrimaryCtxRelease(dev);
    return count > 0 ? 0 : 3;
}
