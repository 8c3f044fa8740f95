// Porting notes: cudaMalloc and cudaFree below are real calls; the ones in
// comments and strings must stay as written. See <cuda_runtime.h>.
#include <hip/hip_runtime.h>
#include <cstdio>

/* A block comment: cublasSgemm(handle, ...) and cudaMemcpy(dst, src, n,
   cudaMemcpyHostToDevice) are only mentioned here. */
static const char* kHelp = "call cudaMalloc before cudaMemcpy; include <cuda_runtime.h>";
static const char* kRaw = R"(cudaFree(ptr); // not a comment, "not a string")";
static const char* kRawDelim = R"tag(cudaStream_t s; )" cudaFree )tag";
static const char kQuote = '"';
static const char kApostrophe = '\'';

int main() {
    float* p = nullptr;
    // the next line is still part of this comment \
    cudaMemset(p, 0, 16); cudaDeviceSynchronize();
    hipError_t err = hipMalloc(&p, 16 * sizeof(float)); /* cudaMalloc: 16 floats */
    if (err != hipSuccess) {
        std::printf("cudaMalloc failed: %s \"cudaGetErrorString\"\n", hipGetErrorString(err));
        return 1;
    }
    std::printf("%s\n%s\n%s\n%c%c\n", kHelp, kRaw, kRawDelim, kQuote, kApostrophe);
    std::printf("cudaFree" "(p)\n"); hipFree(p); // cudaFree(p) done
    return 0;
}
