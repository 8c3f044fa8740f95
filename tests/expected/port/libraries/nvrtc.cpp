#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <string>
#include <vector>

static const char* kSource = R"(extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; })";

std::vector<char> compile_scale(std::string& log) {
    hiprtcProgram prog;
    hiprtcCreateProgram(&prog, kSource, "scale.cu", 0, nullptr, nullptr);
    const char* opts[] = {"--std=c++17"};
    hiprtcResult res = hiprtcCompileProgram(prog, 1, opts);
    size_t log_size = 0;
    hiprtcGetProgramLogSize(prog, &log_size);
    log.resize(log_size);
    hiprtcGetProgramLog(prog, &log[0]);
    std::vector<char> image;
    if (res == HIPRTC_SUCCESS) {
        size_t size = 0;
        hiprtcGetCodeSize(prog, &size);
        image.resize(size);
        hiprtcGetCode(prog, image.data());
    } else {
        log += std::string("nvrtcCompileProgram: ") + hiprtcGetErrorString(res);
    }
    hiprtcDestroyProgram(&prog);
    return image;
}

// Options built at run time as char *: NVRTC's const char * const * takes them, hipRTC's
// const char ** takes them only through a cast.
hiprtcResult compile_with(hiprtcProgram prog, std::vector<std::string>& flags) {
    std::vector<char*> opts;
    for (auto& f : flags) opts.push_back(&f[0]);
    return hiprtcCompileProgram(prog, static_cast<int>(opts.size()), (const char **)(opts.data()));
}

hipError_t launch_scale(const std::vector<char>& image, hipDeviceptr_t x, float a) {
    hipModule_t module;  // the driver API runs what NVRTC compiled
    hipFunction_t fn;
    hipError_t r = hipModuleLoadData(&module, image.data());
    if (r != hipSuccess) return r;
    hipModuleGetFunction(&fn, module, "scale");
    void* args[] = {&x, &a};
    r = hipModuleLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
    hipModuleUnload(module);
    return r;
}
