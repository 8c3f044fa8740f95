#include <hip/hip_runtime.h>
#include <roctracer/roctx.h>

// Profiler ranges around a copy-in / compute / copy-out step.
void profiled_step(float* host, float* dev, size_t bytes, hipStream_t stream) {
    roctxRangePushA("step");
    roctxMarkA("copy in");
    hipMemcpyAsync(dev, host, bytes, hipMemcpyHostToDevice, stream);

    roctx_range_id_t sync_range = roctxRangeStartA("synchronize");
    hipStreamSynchronize(stream);
    roctxRangeStop(sync_range);

    roctxRangePush("copy out");  // the ASCII macro forms map too
    hipMemcpyAsync(host, dev, bytes, hipMemcpyDeviceToHost, stream);
    roctxRangePop();
    roctxMark("done");
    roctxRangePop();
}

// roctx has no attributes or thread names: these stay and are reported.
void named_range() {
    nvtxNameOsThreadA(0, "worker");
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "nvtxRangePushEx";
    nvtxRangePushEx(&attr);
    roctxRangePop();
}
