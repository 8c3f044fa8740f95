#include <hip/hip_runtime.h>

// Résumé: copy the café table to the device (Latin-1 comment, not UTF-8).
__global__ void bump(int* table, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) table[i] += 1;  /* déjà vu: µs timing */
}

int upload(const int* host, int n) {
    int* dev = nullptr;
    if (hipMalloc(&dev, n * sizeof(int)) != hipSuccess) return 1;
    hipMemcpy(dev, host, n * sizeof(int), hipMemcpyHostToDevice);
    bump<<<(n + 63) / 64, 64>>>(dev, n);
    hipDeviceSynchronize();
    hipFree(dev);
    return 0;
}
