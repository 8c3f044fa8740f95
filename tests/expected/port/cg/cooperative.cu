#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

// Grid-wide sum: tile shuffles within a warp, a block barrier, then one grid barrier.
__global__ void grid_sum(const float* in, float* partial, float* total, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::grid_group grid = cg::this_grid();
    float v = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    // sm_70+ only, and not in HIP up to ROCm 6.3: left as written and reported.
    v *= cg::labeled_partition(warp, v > 0.0f).size() > 0 ? 1.0f : 0.0f;
#endif
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    if (warp.thread_rank() == 0) atomicAdd(&partial[blockIdx.x], v);
    block.sync();
    grid.sync();  // needs a cooperative launch
    if (grid.thread_rank() == 0) {
        float s = 0.0f;
        for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
        *total = s;
    }
}

// A user type with a member called sync, and a user namespace with this_grid: unchanged.
struct Barrier { int sync; };
namespace mylib { inline int this_grid() { return 0; } }

int launch_grid_sum(const float* in, float* partial, float* total, int n, hipStream_t stream) {
    void* args[] = {&in, &partial, &total, &n};
    Barrier b{mylib::this_grid()};
    hipError_t err = hipLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_sum), dim3(64), dim3(256), args, 0, stream);
    return err == hipSuccess ? b.sync : -1;
}
