#include "core/runtime/settings.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/runtime/errors.hpp"

namespace gpupy {

int64_t env_integer(const char* name, int64_t fallback, int64_t minimum) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || errno == ERANGE || x < minimum) {
        throw ValueError(std::string(name) + " must be an integer >= " + std::to_string(minimum) + ", got '" + v + "'");
    }
    return x;
}

Settings Settings::from_environment() {
    Settings s;
    s.block_size = env_integer("GPUPY_BLOCK_SIZE", kDefaultBlockSize, 1);
    s.cache_bytes = env_integer("GPUPY_CACHE_BYTES", kDefaultCacheBytes, 1);
    s.host_elements = env_integer("GPUPY_HOST_ELEMENTS", -1, 0);
    s.eager_elements = env_integer("GPUPY_EAGER_ELEMENTS", kDefaultEagerElements, 0);
    return s;
}

}  // namespace gpupy
