#include <hip/hip_runtime.h>

__global__ void bump(int* x) { x[threadIdx.x] += 1; }

// CUDA 12's cudaGraphInstantiate(&exec, graph) leaves flags at their default, 0;
// HIP's hipGraphInstantiate has no defaults (5 arguments).
int capture_and_run(int* x, hipStream_t stream) {
    hipGraph_t graph;
    hipGraphExec_t exec;
    hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal);
    bump<<<1, 64, 0, stream>>>(x);
    hipStreamEndCapture(stream, &graph);
    if (hipGraphInstantiateWithFlags(&exec, graph, 0) != hipSuccess) return 1;
    hipGraphLaunch(exec, stream);
    hipStreamSynchronize(stream);
    hipGraphExecDestroy(exec);
    hipGraphDestroy(graph);
    return 0;
}
