#include <hip/hip_runtime.h>
#include <hipfft/hipfft.h>

#include <cstdio>

int forward_inverse(hipfftComplex* data, int n, hipStream_t stream) {
    hipfftHandle plan;
    if (hipfftPlan1d(&plan, n, HIPFFT_C2C, 1) != HIPFFT_SUCCESS) {
        std::printf("cufftPlan1d failed\n");
        return 1;
    }
    hipfftSetStream(plan, stream);
    hipfftExecC2C(plan, data, data, HIPFFT_FORWARD);
    hipfftExecC2C(plan, data, data, HIPFFT_BACKWARD);
    hipfftDestroy(plan);

    hipfftHandle real_plan;
    hipfftReal* real = nullptr;
    hipMalloc(&real, n * sizeof(hipfftReal));
    hipfftPlan1d(&real_plan, n, HIPFFT_R2C, 1);
    hipfftResult r = hipfftExecR2C(real_plan, real, data);
    hipfftDestroy(real_plan);
    hipFree(real);
    return r == HIPFFT_SUCCESS ? 0 : 2;
}
