// The drivers' settings: the values of driver options (set_option) and the
// environment variables that set their defaults, read one way for every
// driver. A driver reads the environment nowhere else; the rule for a
// value is the core's (gpupy/setting_values.hpp).
#ifndef GPUPY_DRIVER_COMMON_OPTIONS_HPP
#define GPUPY_DRIVER_COMMON_OPTIONS_HPP

#include <cstdint>
#include <initializer_list>
#include <string>

namespace gpupy_driver {

// A whole decimal integer (no trailing text, in range); false otherwise.
bool parse_integer(const char* text, int64_t* out);
// True for the value "default", which resets an option to its default.
bool is_default(const char* value);

// The text of environment variable `name`; "" when unset. For settings
// that take any text (a directory) and for the system's own variables.
std::string env_text(const char* name);
// Environment variable `name` as an integer >= minimum into *out, or
// `fallback` when it is unset or empty. Returns "" or, for any other
// value, the error a driver's init reports ("NAME must be an integer >=
// MIN, got 'VALUE'").
std::string env_integer(const char* name, int64_t fallback, int64_t minimum, int64_t* out);
// Environment variable `name` as one of the words `accepted` into *out,
// or "" when it is unset or empty. Returns "" or the error naming the
// variable and the words.
std::string env_choice(const char* name, std::initializer_list<const char*> accepted, std::string* out);

}  // namespace gpupy_driver

#endif
