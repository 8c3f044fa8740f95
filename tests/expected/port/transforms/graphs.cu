#include <hip/hip_runtime.h>

__global__ void step(int* x) { x[threadIdx.x] += 1; }

int run_graph(int* x, hipStream_t stream) {
    hipGraph_t graph;
    hipGraphExec_t exec;
    hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal);
    step<<<1, 32, 0, stream>>>(x);
    hipStreamEndCapture(stream, &graph);
    hipGraphInstantiateWithFlags(&exec, graph, 0);
    hipGraphLaunch(exec, stream);
    hipStreamSynchronize(stream);
    hipGraphExecDestroy(exec);
    hipGraphDestroy(graph);
    return 0;
}
