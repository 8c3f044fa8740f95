// The driver API's error strings: below HIP 5.4 the runtime's functions give the same text,
// written through the out-pointer by a comma expression.
#include <hip/hip_runtime.h>

#include <cstdio>

struct Report { const char* name; const char* text; };

int report(hipError_t err, Report* out) {
    const char* text = nullptr;
    (*(&text) = hipGetErrorString(err), hipSuccess);
    if ((*(&out->name) = hipGetErrorName(err), hipSuccess) != hipSuccess) return 1;
    out->text = text;
    std::printf("%s: %s\n", out->name, out->text);
    return 0;
}
