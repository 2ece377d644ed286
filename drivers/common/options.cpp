#include "options.hpp"

#include <cstdlib>
#include <cstring>

#include "gpupy/setting_values.hpp"

namespace gpupy_driver {

bool parse_integer(const char* text, int64_t* out) { return gpupy::parse_whole_integer(text, out); }

bool is_default(const char* value) { return value && std::strcmp(value, "default") == 0; }

std::string env_text(const char* name) {
    const char* text = std::getenv(name);
    return text ? text : "";
}

std::string env_integer(const char* name, int64_t fallback, int64_t minimum, int64_t* out) {
    const std::string text = env_text(name);
    *out = fallback;
    if (text.empty()) return "";
    return gpupy::integer_setting(name, text.c_str(), minimum, out);
}

std::string env_choice(const char* name, std::initializer_list<const char*> accepted, std::string* out) {
    const std::string text = env_text(name);
    out->clear();
    if (text.empty()) return "";
    return gpupy::choice_setting(name, text.c_str(), accepted, out);
}

}  // namespace gpupy_driver
