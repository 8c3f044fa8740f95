#define HIPCUB_STDERR  // CubDebug prints what fails
#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>
#include <hip/hip_runtime.h>

// Two-phase device-wide sum: ask for the temporary storage size, allocate, then run.
hipError_t device_sum(const int* d_in, int* d_out, int n, hipStream_t stream) {
    void* d_temp = nullptr;
    size_t temp_bytes = 0;
    hipError_t err = HipcubDebug(hipcub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, n, stream));
    if (err != hipSuccess) return err;
    err = HipcubDebug(hipMallocAsync(&d_temp, temp_bytes, stream));
    if (err != hipSuccess) return err;
    err = HipcubDebug(::hipcub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, n, stream));
    hipFreeAsync(d_temp, stream);
    return err;
}

// One sum per warp of a 128-thread block.
__global__ void warp_sums(const int* in, int* out) {
    using WarpReduce = hipcub::WarpReduce<int>;
    __shared__ typename WarpReduce::TempStorage temp[128 / HIPCUB_WARP_THREADS];
    int warp = threadIdx.x / HIPCUB_WARP_THREADS;
    int sum = WarpReduce(temp[warp]).Sum(in[blockIdx.x * blockDim.x + threadIdx.x]);
    if (threadIdx.x % HIPCUB_WARP_THREADS == 0) out[blockIdx.x * 4 + warp] = sum;
}

// Not CUB: a user namespace that happens to be called cub, and a string.
namespace mylib { namespace cub { inline const char* name() { return "cub::DeviceReduce"; } } }
const char* which() { return mylib::cub::name(); }
