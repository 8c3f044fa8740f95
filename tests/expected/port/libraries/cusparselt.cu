#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hipsparselt/hipsparselt.h>

// D = A * B with a 2:4 structured-sparse fp16 A (m x k) and dense B (k x n), row-major.
hipsparseStatus_t sparse_gemm(const __half* dA, const __half* dB, __half* dD, int m, int n, int k,
                             void* dA_compressed, void* workspace, hipStream_t stream) {
    hipsparseLtHandle_t handle;
    hipsparseLtMatDescriptor_t a, b, d;
    hipsparseLtMatmulDescriptor_t matmul;
    hipsparseLtMatmulAlgSelection_t alg;
    hipsparseLtMatmulPlan_t plan;
    hipsparseLtInit(&handle);
    hipsparseLtStructuredDescriptorInit(&handle, &a, m, k, k, 16, HIP_R_16F, HIPSPARSE_ORDER_ROW,
                                       HIPSPARSELT_SPARSITY_50_PERCENT);
    hipsparseLtDenseDescriptorInit(&handle, &b, k, n, n, 16, HIP_R_16F, HIPSPARSE_ORDER_ROW);
    hipsparseLtDenseDescriptorInit(&handle, &d, m, n, n, 16, HIP_R_16F, HIPSPARSE_ORDER_ROW);
    hipsparseLtMatmulDescriptorInit(&handle, &matmul, HIPSPARSE_OPERATION_NON_TRANSPOSE,
                                   HIPSPARSE_OPERATION_NON_TRANSPOSE, &a, &b, &d, &d,
                                   HIPSPARSELT_COMPUTE_32F);
    hipsparseLtMatmulAlgSelectionInit(&handle, &alg, &matmul, HIPSPARSELT_MATMUL_ALG_DEFAULT);
    hipsparseLtMatmulPlanInit(&handle, &plan, &matmul, &alg);
    size_t ws = 0, compressed = 0, compress_buffer = 0;
    hipsparseLtMatmulGetWorkspace(&handle, &plan, &ws);
    hipsparseLtSpMMACompressedSize2(&handle, &a, &compressed, &compress_buffer);
    hipsparseLtSpMMACompress2(&handle, &a, 1, HIPSPARSE_OPERATION_NON_TRANSPOSE, dA, dA_compressed,
                             workspace, stream);
    float alpha = 1.0f, beta = 0.0f;
    hipsparseStatus_t st = hipsparseLtMatmul(&handle, &plan, &alpha, dA_compressed, dB, &beta, dD,
                                           dD, workspace, &stream, 1);
    hipsparseLtMatmulPlanDestroy(&plan);
    hipsparseLtMatDescriptorDestroy(&a);
    hipsparseLtMatDescriptorDestroy(&b);
    hipsparseLtMatDescriptorDestroy(&d);
    cusparseLtDestroy(&handle);  // in no table yet: left as written, reported
    return st == HIPSPARSE_STATUS_SUCCESS ? st : HIPSPARSE_STATUS_EXECUTION_FAILED;
}
