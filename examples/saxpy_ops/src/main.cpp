// Demo driver. Host-only C++: compiled by the C++ compiler, linked against the
// CUDA runtime, and calling into the saxpy_ops library.
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "saxpy_ops/ops.h"

namespace {

bool report(cudaError_t err, const char* what) {
    if (err != cudaSuccess) {
        std::printf("%s: %s\n", what, cudaGetErrorString(err));
        return false;
    }
    return true;
}

}  // namespace

int main() {
    const int n = 1 << 20;
    std::vector<float> x(n, 1.0f), y(n, 2.0f);

    const float ms = saxpy_ops::saxpy(3.0f, x.data(), y.data(), n);
    std::printf("saxpy: y[0] = %g (expect 5) in %.3f ms\n", y[0], ms);

    float* d_buf = nullptr;
    if (!report(cudaMalloc(&d_buf, n * sizeof(float)), "cudaMalloc")) {
        return 1;  // cudaMalloc failed: nothing to free yet
    }
    cudaError_t err = cudaMemcpy(d_buf, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
        std::printf("cudaMemcpy: %s\n", cudaGetErrorString(err));
        cudaFree(d_buf);
        return 1;
    }
    std::printf("sum = %g (expect %d)\n", saxpy_ops::sum(d_buf, n), 5 * n);

    saxpy_ops::fill_uniform(d_buf, n, 1234);
    std::printf("host generator: %d of %d above 0.5\n", saxpy_ops::count_above(d_buf, n, 0.5f), n);
    saxpy_ops::fill_uniform_device(d_buf, n, 1234);
    std::printf("device generator: %d of %d above 0.5\n", saxpy_ops::count_above(d_buf, n, 0.5f), n);

    // 2x2 identity times [1 2; 3 4] (column-major) gives the same matrix back.
    const float h_ab[8] = {1, 0, 0, 1, 1, 3, 2, 4};
    float h_c[4] = {};
    float* d_mats = nullptr;
    report(cudaMalloc(&d_mats, 12 * sizeof(float)), "cudaMalloc");
    report(cudaMemcpy(d_mats, h_ab, sizeof(h_ab), cudaMemcpyHostToDevice), "cudaMemcpy");
    saxpy_ops::sgemm(2, 2, 2, d_mats, d_mats + 4, d_mats + 8);
    report(cudaMemcpy(h_c, d_mats + 8, sizeof(h_c), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::printf("sgemm: [%g %g; %g %g]\n", h_c[0], h_c[2], h_c[1], h_c[3]);

    cudaFree(d_mats);
    cudaFree(d_buf);
    return std::fabs(y[0] - 5.0f) < 1e-6f ? 0 : 1;
}
