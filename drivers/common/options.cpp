#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpupy_driver {

bool parse_integer(const char* text, int64_t* out) {
    if (!text || !*text) return false;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(text, &end, 10);
    if (*end != '\0' || errno == ERANGE) return false;
    *out = x;
    return true;
}

bool is_default(const char* value) { return value && std::strcmp(value, "default") == 0; }

int64_t env_integer_or(const char* name, int64_t fallback, int64_t minimum) {
    int64_t v;
    return parse_integer(std::getenv(name), &v) && v >= minimum ? v : fallback;
}

}  // namespace gpupy_driver
