// gpupy_resources arithmetic every driver does the same way: slot-wise sums
// and differences, and a check against per-slot limits. What each slot
// counts is the driver's own business (driver.hpp).
#ifndef GPUPY_DRIVER_COMMON_RESOURCE_SLOTS_HPP
#define GPUPY_DRIVER_COMMON_RESOURCE_SLOTS_HPP

#include <cstdint>

#include "gpupy/driver.hpp"

namespace gpupy_driver {

// No limit on a slot.
constexpr int64_t kUnlimited = INT64_MAX / 4;

struct ResourceLimits {
    int64_t slot[GPUPY_RESOURCE_SLOTS] = {kUnlimited, kUnlimited, kUnlimited, kUnlimited,
                                          kUnlimited, kUnlimited, kUnlimited, kUnlimited};
};

inline void resources_zero(gpupy_resources* r) {
    for (int64_t& s : r->slot) s = 0;
}
inline void resources_add(gpupy_resources* acc, const gpupy_resources* r) {
    for (int i = 0; i < GPUPY_RESOURCE_SLOTS; ++i) acc->slot[i] += r->slot[i];
}
inline void resources_sub(gpupy_resources* acc, const gpupy_resources* r) {
    for (int i = 0; i < GPUPY_RESOURCE_SLOTS; ++i) acc->slot[i] -= r->slot[i];
}
inline bool resources_fit(const gpupy_resources& r, const ResourceLimits& limits) {
    for (int i = 0; i < GPUPY_RESOURCE_SLOTS; ++i) {
        if (r.slot[i] > limits.slot[i]) return false;
    }
    return true;
}

}  // namespace gpupy_driver

#endif
