// Parsing the values of driver options (set_option) and of the environment
// variables that set their defaults, one way for every driver.
#ifndef GPUPY_DRIVER_COMMON_OPTIONS_HPP
#define GPUPY_DRIVER_COMMON_OPTIONS_HPP

#include <cstdint>
#include <string>

namespace gpupy_driver {

// A whole decimal integer (no trailing text, in range); false otherwise.
bool parse_integer(const char* text, int64_t* out);
// True for the value "default", which resets an option to its default.
bool is_default(const char* value);
// Environment variable `name` as an integer >= minimum into *out, or
// `fallback` when it is unset or empty. Returns "" or, for any other value,
// the error a driver's init reports (the core's settings say the same:
// "NAME must be an integer >= MIN, got 'VALUE'"): a wrong setting is said,
// never replaced by the default in silence.
std::string env_integer(const char* name, int64_t fallback, int64_t minimum, int64_t* out);

}  // namespace gpupy_driver

#endif
