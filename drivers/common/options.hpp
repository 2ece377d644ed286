// Parsing the values of driver options (set_option) and of the environment
// variables that set their defaults, one way for every driver.
#ifndef GPUPY_DRIVER_COMMON_OPTIONS_HPP
#define GPUPY_DRIVER_COMMON_OPTIONS_HPP

#include <cstdint>

namespace gpupy_driver {

// A whole decimal integer (no trailing text, in range); false otherwise.
bool parse_integer(const char* text, int64_t* out);
// True for the value "default", which resets an option to its default.
bool is_default(const char* value);
// Environment variable `name` as an integer >= minimum, or `fallback` when
// it is unset, empty or not such an integer.
int64_t env_integer_or(const char* name, int64_t fallback, int64_t minimum);

}  // namespace gpupy_driver

#endif
