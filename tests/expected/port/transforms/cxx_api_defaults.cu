#include <hip/hip_runtime.h>

// CUDA's C++ API (cuda_runtime.h) takes typed pointers and defaults trailing arguments where
// HIP's functions take void** and require every argument.
__device__ float d_table[4];
__global__ void fill(float* p) { p[threadIdx.x] = d_table[threadIdx.x & 3]; }

void typed_forms(hipStream_t stream, hipGraph_t graph, hipExternalSemaphore_t sem) {
    float *host = nullptr, *dev = nullptr, *pitched = nullptr, *table = nullptr;
    size_t pitch = 0;
    hipHostAlloc((void **)&host, 64 * sizeof(float), hipHostMallocMapped);
    hipHostGetDevicePointer((void **)&dev, host, 0);
    hipHostGetDevicePointer((void **)&dev, host, 0);
    hipMallocPitch((void **)&pitched, &pitch, 16 * sizeof(float), 4);
    hipGetSymbolAddress((void **)&table, HIP_SYMBOL(d_table));

    hipArray_t volume;
    hipChannelFormatDesc desc = hipCreateChannelDesc<float>();
    hipMalloc3DArray(&volume, &desc, make_hipExtent(4, 4, 4), 0);
    hipMalloc3DArray(&volume, &desc, make_hipExtent(4, 4, 4), hipArraySurfaceLoadStore);

    void* args[] = {&dev};
    hipLaunchCooperativeKernel(reinterpret_cast<const void*>(fill), dim3(1), dim3(32), args, 0, 0);
    hipLaunchCooperativeKernel(reinterpret_cast<const void*>(fill), dim3(1), dim3(32), args, 0, 0);
    hipLaunchCooperativeKernel(reinterpret_cast<const void*>(fill), dim3(1), dim3(32), args, 0, stream);

    hipGraphExec_t exec;
    hipGraphInstantiateWithFlags(&exec, graph, 0);

    hipExternalSemaphoreSignalParams signal = {};
    hipExternalSemaphoreWaitParams wait = {};
    hipSignalExternalSemaphoresAsync(&sem, &signal, 1, 0);
    hipWaitExternalSemaphoresAsync(&sem, &wait, 1, stream);

    hipFreeArray(volume);
    hipFree(pitched);
    hipHostFree(host);
}
