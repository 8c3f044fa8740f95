#define HIP_API_PER_THREAD_DEFAULT_STREAM 1
#define __HIP_NO_HALF_OPERATORS__
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

#ifdef __HIPCC__
#define HD __host__ __device__
#else
#define HD
#endif

#if defined(__HIPCC_RTC__)
#define KERNEL_STDLIB 0  // NVRTC: no host standard library
#else
#define KERNEL_STDLIB 1
#endif

#if defined(THRUST_DEVICE_SYSTEM) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_HIP
#define ON_THRUST_GPU 1
#endif

#if !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)
#error "cuda_runtime.h must come first"
#endif

// Kept as written (and reported): the arch and version macros have no HIP value.
HD inline int arch_tag() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __CUDA_ARCH__;
#elif defined(CUDA_VERSION) && CUDA_VERSION >= 12000
    return CUDA_VERSION / 1000 + KERNEL_STDLIB;
#else
    return KERNEL_STDLIB;
#endif
}

__global__ void tag(int* out) { out[threadIdx.x] = arch_tag(); }
