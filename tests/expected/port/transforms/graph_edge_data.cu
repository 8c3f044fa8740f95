// CUDA 13's graph-dependency calls take edge data that HIP's do not: a null one is dropped, and
// cudaStreamGetCaptureInfo becomes HIP's _v2, whose outputs after the status are all optional.
#include <hip/hip_runtime.h>

__global__ void step(int* x) { x[threadIdx.x] += 1; }

size_t capture_and_link(hipStream_t stream, hipGraph_t graph, hipGraphNode_t a, hipGraphNode_t b) {
    hipStreamCaptureStatus status;
    const hipGraphNode_t* deps = NULL;
    size_t count = 0;
    hipStreamGetCaptureInfo_v2(stream, &status);
    hipStreamGetCaptureInfo_v2(stream, &status, NULL, &graph, &deps, &count);
    hipStreamUpdateCaptureDependencies(stream, &a, 1, hipStreamSetCaptureDependencies);
    hipGraphAddDependencies(graph, &a, &b, 1);
    hipGraphRemoveDependencies(graph, &a, &b, 1);
    hipGraphNodeGetDependencies(b, NULL, &count);
    hipGraphNodeGetDependentNodes(a, NULL, &count);
    hipGraphGetEdges(graph, NULL, NULL, &count);
    return count;
}
