# FindCUDA-era script, included by a top-level CMakeLists.txt.
find_package(hip REQUIRED)
find_package(hipblas REQUIRED)
list(APPEND CUDA_NVCC_FLAGS -ffast-math)
add_library(legacy_kernels kernels/scan.cu kernels/sort.cu)
set_source_files_properties(kernels/scan.cu kernels/sort.cu PROPERTIES LANGUAGE HIP)
target_link_libraries(legacy_kernels hip::host roc::hipblas)
set(CMAKE_CUDA_HOST_COMPILER /usr/bin/g++-11)
