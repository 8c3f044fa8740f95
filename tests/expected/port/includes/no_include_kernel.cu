/*
 * Copyright (c) 2024 Example Contributors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software, to deal in the software without restriction.
 *
 * This file relies on nvcc including the runtime implicitly: no #include at all.
 */

#include <hip/hip_runtime.h>
__device__ float square(float v) { return v * v; }

__global__ void square_all(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = square(data[i]);
    }
}

void launch_square_all(float* data, int n) {
    square_all<<<(n + 255) / 256, 256>>>(data, n);
}
