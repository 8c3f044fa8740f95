#include <hip/hip_runtime.h>
#include <hiprand/hiprand_kernel.h>

__global__ void setup(hiprandState* states, unsigned long long seed, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) hiprand_init(seed, id, 0, &states[id]);
}

__global__ void sample(hiprandState* states, float* uniform, float* normal, unsigned int* bits, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    hiprandState local = states[id];
    uniform[id] = hiprand_uniform(&local);
    normal[id] = hiprand_normal(&local);
    bits[id] = hiprand(&local);
    states[id] = local;
}

__global__ void philox(float4* out, unsigned long long seed, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    hiprandStatePhilox4_32_10_t state;
    hiprand_init(seed, id, 0, &state);
    if (id < n) out[id] = hiprand_uniform4(&state);
}

void run(hiprandState* states, float* u, float* g, unsigned int* b, float4* q, int n) {
    setup<<<(n + 127) / 128, 128>>>(states, 7ULL, n);
    sample<<<(n + 127) / 128, 128>>>(states, u, g, b, n);
    philox<<<(n + 127) / 128, 128>>>(q, 7ULL, n);
    hipDeviceSynchronize();
}
