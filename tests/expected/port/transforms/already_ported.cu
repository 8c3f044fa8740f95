#include <hip/hip_runtime.h>

// Code that already spells what the transforms would add: nothing is added twice.
#ifndef HIP_SYMBOL
#define HIP_SYMBOL(x) x  // nvcc: identity; HIP's runtime header defines the real one
#endif

__constant__ float table[8];
__global__ void scale(float* x) { x[threadIdx.x] *= table[threadIdx.x % 8]; }

using EventCreateFn = hipError_t (*)(hipEvent_t*);
EventCreateFn event_creator() { return &hipEventCreate; }  // not a call: renamed only

int already_ported(const float* host, hipStream_t s) {
    hipMemcpyToSymbol(HIP_SYMBOL(table), host, sizeof(table));
    hipMemcpyToSymbolAsync(HIP_SYMBOL(table), host, sizeof(table), 0, hipMemcpyHostToDevice, s);
    hipFuncSetCacheConfig(reinterpret_cast<const void*>(scale), hipFuncCachePreferL1);
    hipFuncAttributes attr;
    hipFuncGetAttributes(&attr, (const void*)scale);
    float* pinned = nullptr;
    hipHostMalloc(&pinned, sizeof(table), hipHostMallocPortable);  // flags given: none added
    hipGraph_t graph;
    hipGraphExec_t exec;
    hipGraphCreate(&graph, 0);
    hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0);  // CUDA 11's 5-argument form
    hipEvent_t e;
    event_creator()(&e);
    hipGraphExecDestroy(exec);
    hipGraphDestroy(graph);
    hipHostFree(pinned);
    hipEventDestroy(e);
    return attr.numRegs;
}
