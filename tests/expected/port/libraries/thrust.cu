#include <hip/hip_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/system/hip/error.h>
#include <thrust/system/hip/execution_policy.h>
#include <thrust/system_error.h>

// Sort on a stream, then reduce; errors come back as thrust::system_error.
float sorted_sum(thrust::device_vector<float>& keys, hipStream_t stream) {
    thrust::sort(thrust::hip::par.on(stream), keys.begin(), keys.end());
    float total = thrust::reduce(thrust::system::hip::par.on(stream), keys.begin(), keys.end(), 0.0f);
    thrust::sort(::thrust::hip::par_nosync.on(stream), keys.begin(), keys.end());
    hipError_t err = hipStreamSynchronize(stream);
    if (err != hipSuccess)
        throw thrust::system_error(err, thrust::system::hip_category(), "sorted_sum");
    return total;
}

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_HIP
constexpr bool kOnGpu = true;
#else
constexpr bool kOnGpu = false;
#endif

// Not Thrust's: a user namespace called cuda, a bare `par`, a comment on thrust::cuda::par.
namespace mylib {
namespace cuda { struct policy { int lanes; }; constexpr policy par{32}; }
}  // namespace mylib

int lanes() {
    constexpr auto par = mylib::cuda::par;
    return kOnGpu ? par.lanes : mylib::cuda::par.lanes;
}
