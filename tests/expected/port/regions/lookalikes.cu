#include <hip/hip_runtime.h>

#include <cstddef>
#include <cstdlib>

// User code whose names merely contain CUDA API names.
struct DeviceHooks {
    void* (*cudaMalloc)(std::size_t bytes);
    void (*cudaFree)(void* p);
};

namespace mylib {
inline void* cudaMalloc(std::size_t bytes) { return std::malloc(bytes); }
}  // namespace mylib

static int my_cudaMalloc_calls = 0;

hipError_t cudaMallocWrapper(void** p, std::size_t bytes) {
    ++my_cudaMalloc_calls;
    return hipMalloc(p, bytes);
}

void* my_cudaMalloc(std::size_t bytes) { return mylib::cudaMalloc(bytes); }

int use(DeviceHooks hooks, DeviceHooks* hp) {
    void* a = hooks.cudaMalloc(8);
    void* b = hp->cudaMalloc(8);
    hooks.cudaFree(a);
    hp->cudaFree(b);
    void* c = my_cudaMalloc(8);
    std::free(c);
    void* d = nullptr;
    if (cudaMallocWrapper(&d, 64) != hipSuccess) return 1;
    ::hipFree(d);
    return my_cudaMalloc_calls;
}
