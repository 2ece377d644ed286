// How a setting's value from the environment is read, one rule for the core
// (src/core/runtime/settings.cpp) and every driver (drivers/common/options):
// unset or empty is the default; any other value must be one the setting
// accepts, else the error names the variable, what it accepts and what it
// got ("GPUPY_BLOCK_SIZE must be an integer >= 1, got 'abc'"). A wrong
// setting is said, never replaced by the default in silence.
#ifndef GPUPY_SETTING_VALUES_HPP
#define GPUPY_SETTING_VALUES_HPP

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace gpupy {

// A whole decimal integer (no trailing text, in range); false otherwise.
inline bool parse_whole_integer(const char* text, int64_t* out) {
    if (!text || !*text) return false;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(text, &end, 10);
    if (*end != '\0' || errno == ERANGE) return false;
    *out = x;
    return true;
}

// `text` as an integer >= minimum into *out; "" or the error naming `name`.
inline std::string integer_setting(const char* name, const char* text, int64_t minimum, int64_t* out) {
    int64_t v;
    if (!parse_whole_integer(text, &v) || v < minimum)
        return std::string(name) + " must be an integer >= " + std::to_string(minimum) + ", got '" + text + "'";
    *out = v;
    return "";
}

// `text` as one of the words `accepted` into *out; "" or the error naming
// `name`, worded as the package's own settings word it
// (gpupy/_environment.py): "GPUPY_FALLBACK must be one of 'silent',
// 'warn', 'raise', got 'x'".
inline std::string choice_setting(const char* name, const char* text, std::initializer_list<const char*> accepted,
                                  std::string* out) {
    std::string words;
    for (const char* word : accepted) {
        if (text == std::string(word)) {
            *out = word;
            return "";
        }
        words += std::string(words.empty() ? "" : ", ") + "'" + word + "'";
    }
    return std::string(name) + " must be one of " + words + ", got '" + text + "'";
}

}  // namespace gpupy

#endif
