#include <hip/hip_runtime.h>
#include <hiprand/hiprand.h>

#include <cstdio>

int main() {
    const size_t n = 1 << 12;
    float* uniform = nullptr;
    float* normal = nullptr;
    unsigned int* bits = nullptr;
    hipMalloc(&uniform, n * sizeof(float));
    hipMalloc(&normal, n * sizeof(float));
    hipMalloc(&bits, n * sizeof(unsigned int));

    hiprandGenerator_t gen;
    hiprandStatus_t st = hiprandCreateGenerator(&gen, HIPRAND_RNG_PSEUDO_XORWOW);
    if (st != HIPRAND_STATUS_SUCCESS) return 1;
    hipStream_t stream;
    hipStreamCreate(&stream);
    hiprandSetStream(gen, stream);
    hiprandSetPseudoRandomGeneratorSeed(gen, 42ULL);
    hiprandGenerateUniform(gen, uniform, n);
    hiprandGenerateNormal(gen, normal, n, 0.0f, 1.0f);
    hiprandGenerate(gen, bits, n);
    hiprandDestroyGenerator(gen);

    hiprandGenerator_t host_gen;
    float host_values[8];
    hiprandCreateGeneratorHost(&host_gen, HIPRAND_RNG_PSEUDO_MRG32K3A);
    hiprandGenerateUniform(host_gen, host_values, 8);
    hiprandDestroyGenerator(host_gen);

    hipStreamSynchronize(stream);
    hipStreamDestroy(stream);
    hipFree(bits);
    hipFree(normal);
    hipFree(uniform);
    std::printf("%f\n", host_values[0]);
    return 0;
}
