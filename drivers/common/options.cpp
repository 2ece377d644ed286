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

std::string env_integer(const char* name, int64_t fallback, int64_t minimum, int64_t* out) {
    const char* text = std::getenv(name);
    *out = fallback;
    if (!text || !*text) return "";
    int64_t v;
    if (!parse_integer(text, &v) || v < minimum)
        return std::string(name) + " must be an integer >= " + std::to_string(minimum) + ", got '" + text + "'";
    *out = v;
    return "";
}

}  // namespace gpupy_driver
