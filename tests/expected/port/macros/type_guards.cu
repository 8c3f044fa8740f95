// Code that is compiled only where CUDA's type headers came first, tested by their include
// guards, as cuda-samples' helper_cuda.h does for checkCudaErrors: the port keeps it compiled.
#include <cstdio>
#include <cstdlib>
#include <hip/hip_runtime.h>

#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H
static const char* errorName(hipError_t error) { return hipGetErrorName(error); }

template <typename T>
void check(T result, const char* call, const char* file, int line) {
    if (result) {
        fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, errorName(result));
        exit(EXIT_FAILURE);
    }
}
#define CHECK(call) check((call), #call, __FILE__, __LINE__)
#endif

#if defined(HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H) && defined(HIP_INCLUDE_HIP_TEXTURE_TYPES_H)
typedef float4 vec_t;
#endif

__global__ void fill(vec_t* p) { p[threadIdx.x] = make_float4(1, 2, 3, 4); }

int main() {
    vec_t* d = nullptr;
    CHECK(hipMalloc(&d, 32 * sizeof(vec_t)));
    fill<<<1, 32>>>(d);
    CHECK(hipDeviceSynchronize());
    CHECK(hipFree(d));
    return 0;
}
