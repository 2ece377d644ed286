#include "core/runtime/settings.hpp"

#include <cstdlib>
#include <string>

#include "core/runtime/errors.hpp"
#include "gpupy/setting_values.hpp"

namespace gpupy {

namespace {

// The one place the core reads the environment: "" when unset.
std::string environment_text(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

int64_t env_integer(const char* name, int64_t fallback, int64_t minimum) {
    const std::string text = environment_text(name);
    if (text.empty()) return fallback;
    int64_t v;
    const std::string error = integer_setting(name, text.c_str(), minimum, &v);
    if (!error.empty()) throw ValueError(error);
    return v;
}

Settings Settings::from_environment() {
    Settings s;
    s.block_size = env_integer("GPUPY_BLOCK_SIZE", kDefaultBlockSize, 1);
    s.cache_bytes = env_integer("GPUPY_CACHE_BYTES", kDefaultCacheBytes, 1);
    s.host_elements = env_integer("GPUPY_HOST_ELEMENTS", -1, 0);
    s.eager_elements = env_integer("GPUPY_EAGER_ELEMENTS", kDefaultEagerElements, 0);
    s.eager_elements_chosen = !environment_text("GPUPY_EAGER_ELEMENTS").empty();
    return s;
}

std::string driver_dir_from_environment() { return environment_text("GPUPY_DRIVER_DIR"); }

}  // namespace gpupy
