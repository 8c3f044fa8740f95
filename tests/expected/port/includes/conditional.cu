#ifdef USE_HALF
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
typedef __half scalar_t;
#else
#include <hip/hip_runtime.h>
typedef float scalar_t;
#endif

#if defined(USE_DRIVER_API)
#  include <hip/hip_runtime.h>
#elif !defined(NO_RUNTIME_API)
#  include <hip/hip_runtime_api.h>
#endif

__global__ void zero(scalar_t* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = scalar_t(0);
}

int main() {
    scalar_t* p = nullptr;
    hipMalloc(&p, 128 * sizeof(scalar_t));
    zero<<<1, 128>>>(p, 128);
    hipDeviceSynchronize();
    hipFree(p);
    return 0;
}
