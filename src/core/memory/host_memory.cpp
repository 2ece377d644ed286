#include "core/memory/host_memory.hpp"

#include <sys/sysinfo.h>

#include <cmath>
#include <cstdio>

namespace gpupy {

uint64_t host_memory_bytes() {
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return 0;
    return (static_cast<uint64_t>(info.totalram) + static_cast<uint64_t>(info.totalswap)) * info.mem_unit;
}

std::string allocation_size_text(uint64_t bytes) {
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int bits = 0;
    for (uint64_t b = bytes; b > 1; b >>= 1) ++bits;  // floor(log2), 0 for 0 and 1
    int unit = (bits < 1 ? 1 : bits) / 10;
    double value = static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << (10 * unit));
    if (unit < 6 && value >= 1023.5) {  // rounds to 1024: say 1.00 of the next unit
        ++unit;
        value /= 1024;
    }
    char text[64];
    if (unit == 0) std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
    // NumPy's format: three significant digits with the point kept ("5.00",
    // "728."), or every digit from 1000 units up ("1000.").
    else if (std::llround(value) < 1000) std::snprintf(text, sizeof text, "%#.3g %s", value, units[unit]);
    else std::snprintf(text, sizeof text, "%#.0f %s", value, units[unit]);
    return text;
}

void check_host_allocation(const Dims& shape, int64_t itemsize, const std::string& dtype_name) {
    uint64_t bytes = static_cast<uint64_t>(itemsize);
    bool overflow = false;
    for (int64_t d : shape) {
        if (d == 0) return;
        if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > (uint64_t{1} << 63)) {
            overflow = true;
        }
    }
    if (overflow) {
        throw ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
    }
    // The system call costs more than making a small array (it was 40% of
    // `zeros(100)`); an allocation below kAlwaysFits can exceed no
    // machine's memory and swap.
    constexpr uint64_t kAlwaysFits = uint64_t{64} << 20;
    if (bytes < kAlwaysFits) return;
    const uint64_t limit = host_memory_bytes();
    if (limit != 0 && bytes > limit) {
        throw HostMemoryError("Unable to allocate " + allocation_size_text(bytes) + " for an array with shape " +
                              shape_tuple_str(shape) + " and data type " + dtype_name);
    }
}

}  // namespace gpupy
