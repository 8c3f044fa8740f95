#include <hip/hip_runtime.h>

// CUDA 13's cuCtxCreate takes a CUctxCreateParams* (null: the defaults) before the flags;
// HIP's hipCtxCreate has the CUDA 12 form (ctx, flags, device).
int with_own_context(int ordinal) {
    hipDevice_t dev;
    if (hipDeviceGet(&dev, ordinal) != hipSuccess) return 1;
    hipCtx_t ctx = nullptr;
    hipError_t r = hipCtxCreate(&ctx, hipDeviceScheduleAuto, dev);
    if (r != hipSuccess) return 2;
    hipCtx_t current = nullptr;
    hipCtxGetCurrent(&current);
    unsigned int flags = 0;
    hipCtxGetFlags(&flags);
    hipCtxDestroy(ctx);
    return current == ctx && flags == hipDeviceScheduleAuto ? 0 : 3;
}
