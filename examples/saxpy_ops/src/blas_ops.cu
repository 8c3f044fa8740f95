// Matrix multiply through cuBLAS (column-major, like the reference BLAS).
#include <cublas_v2.h>

#include "saxpy_ops/check.cuh"
#include "saxpy_ops/ops.h"

#define CUBLAS_CHECK(expr)                                                      \
    do {                                                                        \
        cublasStatus_t status_ = (expr);                                        \
        if (status_ != CUBLAS_STATUS_SUCCESS) {                                 \
            std::fprintf(stderr, "%s:%d: %s failed with cuBLAS status %d\n",   \
                         __FILE__, __LINE__, #expr, static_cast<int>(status_)); \
            std::exit(EXIT_FAILURE);                                            \
        }                                                                       \
    } while (0)

namespace saxpy_ops {

void sgemm(int m, int n, int k, const float* d_a, const float* d_b, float* d_c) {
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    const float alpha = 1.0f;
    const float beta = 0.0f;
    // C (m x n) = A (m x k) * B (k x n), leading dimensions = row counts.
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d_a, m, d_b, k,
                             &beta, d_c, m));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUBLAS_CHECK(cublasDestroy(handle));
}

}  // namespace saxpy_ops
