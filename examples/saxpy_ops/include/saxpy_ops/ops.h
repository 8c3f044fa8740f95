// Public host API of saxpy_ops. Plain C++: callers need no CUDA headers.
// All pointers named d_* are device pointers; h_* are host pointers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace saxpy_ops {

// y = a * x + y on the device, copying h_x/h_y in and h_y back out.
// Returns the kernel time in milliseconds measured with events.
float saxpy(float a, const float* h_x, float* h_y, int n);
float daxpy(double a, const double* h_x, double* h_y, int n);

// Sum of n device floats.
float sum(const float* d_x, int n);

// Number of device floats strictly greater than threshold.
int count_above(const float* d_x, int n, float threshold);

// Uniform (0, 1] numbers: host-side generator, and a per-thread device generator.
void fill_uniform(float* d_x, std::size_t n, std::uint64_t seed);
void fill_uniform_device(float* d_x, int n, std::uint64_t seed);

// C = A * B for column-major m x k and k x n device matrices (cuBLAS).
void sgemm(int m, int n, int k, const float* d_a, const float* d_b, float* d_c);

}  // namespace saxpy_ops
