#include <hip/hip_runtime.h>
#include <hipsolver/hipsolver.h>

// Solve A x = b (n x n, column-major, in place) with an LU factorization.
int lu_solve(float* d_A, float* d_b, int n, hipStream_t stream) {
    hipsolverHandle_t handle = nullptr;
    if (hipsolverDnCreate(&handle) != HIPSOLVER_STATUS_SUCCESS) return -1;
    hipsolverSetStream(handle, stream);

    int lwork = 0;
    hipsolverDnSgetrf_bufferSize(handle, n, n, d_A, n, &lwork);
    float* d_work = nullptr;
    int* d_ipiv = nullptr;
    int* d_info = nullptr;
    hipMalloc(&d_work, sizeof(float) * lwork);
    hipMalloc(&d_ipiv, sizeof(int) * n);
    hipMalloc(&d_info, sizeof(int));

    hipsolverStatus_t st = hipsolverDnSgetrf(handle, n, n, d_A, n, d_work, d_ipiv, d_info);
    if (st == HIPSOLVER_STATUS_SUCCESS)
        st = hipsolverDnSgetrs(handle, HIPBLAS_OP_N, n, 1, d_A, n, d_ipiv, d_b, n, d_info);
    int info = 0;
    hipMemcpyAsync(&info, d_info, sizeof(int), hipMemcpyDeviceToHost, stream);
    hipStreamSynchronize(stream);

    // Not the library: a user struct and strings that mention cusolverDnSgetrf.
    struct { int cusolverDnCreate; } counters = {1};
    const char* what = "cusolverDnSgetrf failed";
    if (info != 0 && counters.cusolverDnCreate) { (void)what; }

    hipFree(d_info);
    hipFree(d_ipiv);
    hipFree(d_work);
    hipsolverDnDestroy(handle);
    return st == HIPSOLVER_STATUS_SUCCESS ? info : -2;
}
