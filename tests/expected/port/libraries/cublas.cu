#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>
#include <hip/hip_runtime.h>

#include <cstdio>

int gemm_then_axpy(const float* a, const float* b, float* c, int n, hipStream_t stream) {
    hipblasHandle_t handle;
    if (hipblasCreate(&handle) != HIPBLAS_STATUS_SUCCESS) {
        std::printf("cublasCreate failed\n");
        return 1;
    }
    hipblasSetStream(handle, stream);
    hipblasSetPointerMode(handle, HIPBLAS_POINTER_MODE_HOST);

    const float alpha = 1.0f, beta = 0.0f;
    hipblasStatus_t st = hipblasSgemm(handle, HIPBLAS_OP_N, HIPBLAS_OP_T, n, n, n, &alpha, a, n, b, n,
                                    &beta, c, n);
    if (st != HIPBLAS_STATUS_SUCCESS) return 2;

    const float two = 2.0f;
    hipblasSaxpy(handle, n * n, &two, a, 1, c, 1);
    float norm = 0.0f;
    hipblasSnrm2(handle, n * n, c, 1, &norm);
    int best = 0;
    hipblasIsamax(handle, n * n, c, 1, &best);

    hipblasDestroy(handle);
    std::printf("norm %f, argmax %d\n", norm, best);
    return 0;
}
