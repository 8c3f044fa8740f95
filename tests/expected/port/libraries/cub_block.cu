#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>

constexpr int kThreads = 128;

__global__ void block_sums(const float* in, float* out, int n) {
    using BlockReduce = hipcub::BlockReduce<float, kThreads>;
    __shared__ typename BlockReduce::TempStorage temp;
    int i = blockIdx.x * kThreads + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float total = BlockReduce(temp).Sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

void run(const float* in, float* out, int n, hipStream_t stream) {
    block_sums<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(in, out, n);
}
