#include <hip/hip_runtime.h>
#include <hipsparse/hipsparse.h>

// y = A * x for a CSR matrix with the generic SpMV API.
int spmv(int rows, int cols, int nnz, int* row_ptr, int* col_idx, float* values, float* x,
         float* y) {
    hipsparseHandle_t handle;
    if (hipsparseCreate(&handle) != HIPSPARSE_STATUS_SUCCESS) return 1;

    hipsparseSpMatDescr_t mat;
    hipsparseDnVecDescr_t vec_x, vec_y;
    hipsparseCreateCsr(&mat, rows, cols, nnz, row_ptr, col_idx, values, HIPSPARSE_INDEX_32I,
                      HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_BASE_ZERO, HIP_R_32F);
    hipsparseCreateDnVec(&vec_x, cols, x, HIP_R_32F);
    hipsparseCreateDnVec(&vec_y, rows, y, HIP_R_32F);

    const float alpha = 1.0f, beta = 0.0f;
    size_t buffer_size = 0;
    hipsparseSpMV_bufferSize(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vec_x, &beta,
                            vec_y, HIP_R_32F, HIPSPARSE_SPMV_ALG_DEFAULT, &buffer_size);
    void* buffer = nullptr;
    hipMalloc(&buffer, buffer_size);
    hipsparseSpMV(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vec_x, &beta, vec_y,
                 HIP_R_32F, HIPSPARSE_SPMV_ALG_DEFAULT, buffer);

    hipFree(buffer);
    hipsparseDestroyDnVec(vec_y);
    hipsparseDestroyDnVec(vec_x);
    hipsparseDestroySpMat(mat);
    hipsparseDestroy(handle);
    return 0;
}
