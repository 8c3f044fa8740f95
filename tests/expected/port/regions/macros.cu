#include <hip/hip_runtime.h>

#include <cstdio>

#define CHECK(call)                                                            \
    do {                                                                       \
        hipError_t e_ = (call);                                               \
        if (e_ != hipSuccess) {                                               \
            std::printf("cudaError in %s: %s\n", #call, hipGetErrorString(e_)); \
        }                                                                      \
    } while (0)

#define ALLOC_ZEROED(ptr, bytes)                  \
    do {                                          \
        /* cudaMalloc then cudaMemset */          \
        CHECK(hipMalloc(&(ptr), (bytes)));       \
        CHECK(hipMemset((ptr), 0, (bytes)));     \
    } while (0)

#define SYNC() hipDeviceSynchronize()
#define STREAM_TYPE hipStream_t
#define COPY_KIND hipMemcpyDeviceToHost // cudaMemcpyHostToDevice would be wrong
#define LOG_CALL(name) std::printf("calling " #name " (cudaMemcpy)\n")

int main() {
    float* d = nullptr;
    float h[4] = {};
    STREAM_TYPE s;
    CHECK(hipStreamCreate(&s));
    ALLOC_ZEROED(d, sizeof(h));
    LOG_CALL(copy_back);
    CHECK(hipMemcpyAsync(h, d, sizeof(h), COPY_KIND, s));
    CHECK(hipStreamSynchronize(s));
    SYNC();
    CHECK(hipFree(d));
    CHECK(hipStreamDestroy(s));
    return static_cast<int>(h[0]);
}
