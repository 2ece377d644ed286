#include "core/runtime/stats.hpp"

namespace gpupy {

Stats& stats() {
    static Stats s;
    return s;
}

}  // namespace gpupy
