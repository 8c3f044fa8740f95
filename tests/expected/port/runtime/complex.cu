#include <hip/hip_runtime.h>
#include <hip/hip_complex.h>
#include <hip/hip_runtime.h>

// y[i] = a * x[i] + y[i] for complex vectors, and |y[i]| into mag.
__global__ void caxpy(hipFloatComplex a, const hipFloatComplex* x, hipFloatComplex* y, float* mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    hipFloatComplex v = hipCaddf(hipCmulf(a, x[i]), y[i]);
    y[i] = v;
    mag[i] = hipCabsf(v);
}

__host__ __device__ inline hipDoubleComplex rotate(hipDoubleComplex z) {
    hipDoubleComplex i1 = make_hipDoubleComplex(0.0, 1.0);
    return hipCmul(z, hipConj(i1));
}

void run_caxpy(const hipFloatComplex* x, hipFloatComplex* y, float* mag, int n, hipStream_t s) {
    hipFloatComplex a = make_hipFloatComplex(2.0f, -1.0f);
    caxpy<<<(n + 255) / 256, 256, 0, s>>>(a, x, y, mag, n);
    float re = hipCrealf(a), im = hipCimagf(a);
    (void)re;
    (void)im;
}

// Look-alikes: a member and a user function that merely contain complex API names.
struct Phasor { float cuCabsf; };
inline float my_cuCabsf(Phasor p) { return p.cuCabsf; }
