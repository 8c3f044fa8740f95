// A host file that takes CUDA's types from builtin_types.h without the runtime header, as
// cuda-samples' driver-API samples do.
#include <hip/hip_runtime_api.h>

struct Volume {
    hipExtent extent;
    hipPitchedPtr data;
    float4 scale;
    dim3 grid;
    hipTextureObject_t texture;
    hipError_t status;
};

Volume make_volume(void* p, size_t w, size_t h, size_t d) {
    Volume v;
    v.extent = hipExtent{w, h, d};
    v.data = hipPitchedPtr{p, w * sizeof(float), w, h};
    v.scale = float4{1.0f, 1.0f, 1.0f, 1.0f};
    v.grid = dim3(1, 1, 1);
    v.texture = 0;
    v.status = hipSuccess;
    return v;
}
