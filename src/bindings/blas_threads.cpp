// NumPy's wheels ship OpenBLAS as a private library (loaded with local
// symbols, its names prefixed), so its functions are found by walking the
// loaded libraries for one whose name says OpenBLAS and asking it for
// `openblas_set_num_threads_local` (OpenBLAS 0.3.27 and later): a
// per-thread count that returns the previous one, cheap enough to set
// around every product.
#include "bindings/blas_threads.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

using SetLocal = int (*)(int);

int find_in_library(struct dl_phdr_info* info, size_t, void* out) {
    const char* name = info->dlpi_name;
    if (!name || !std::strstr(name, "openblas")) return 0;
    void* handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);  // already loaded: no new reference kept
    if (!handle) return 0;
    void* f = dlsym(handle, "openblas_set_num_threads_local");
    dlclose(handle);
    if (!f) return 0;
    *static_cast<SetLocal*>(out) = reinterpret_cast<SetLocal>(f);
    return 1;  // stop: found
}

// Looked up once, after NumPy (and so its BLAS) is loaded: the first
// product comes from the package, which imported NumPy.
SetLocal set_local() {
    static const SetLocal f = [] {
        SetLocal found = nullptr;
        dl_iterate_phdr(find_in_library, &found);
        return found;
    }();
    return f;
}

}  // namespace

bool blas_threads_settable() { return set_local() != nullptr; }

BlasOnCallingThread::BlasOnCallingThread(double flops, double bytes) {
    if (Runtime::get().product_threads_pay(flops, bytes)) return;
    if (SetLocal f = set_local()) {
        previous_ = f(1);
        ++stats().products_on_calling_thread;
    }
}

BlasOnCallingThread::~BlasOnCallingThread() {
    if (previous_ >= 0) set_local()(previous_);
}

}  // namespace gpupy
