// CUDA declares these as struct tags, so code may write `struct`; HIP's names are typedefs.
#include <hip/hip_runtime.h>

struct cudaGraphicsResource;  // a forward declaration, as headers without the runtime write it

struct Interop {
    hipGraphicsResource* vbo;
    hipExternalMemoryHandleDesc handle;
};

hipError_t map(Interop* s, hipStream_t stream) {
    hipGraphicsResource* resources[] = {s->vbo};
    hipExternalSemaphoreSignalParams params = {};
    (void)params;
    return hipGraphicsMapResources(1, resources, stream);
}
