// Coordinates of remapped reads brought back inside an operand's extent m
// (gpupy_map_coordinate in include/gpupy/driver.hpp: numpy.pad's edge,
// reflect and symmetric modes). The core keeps mirrored coordinates
// non-negative, so the truncating % is the floor remainder there. The code
// generator passes (period, top) = (2m - 2, 2m - 2) for reflect and
// (2m, 2m - 1) for symmetric; min(t, top - t) is t on the way out and its
// mirror image on the way back. The _once forms are for coordinates below
// twice the period, where one conditional subtraction is the remainder
// (integer division by a uniform runs a lane at a time on llvmpipe).

// @function gpo_clamp_index_i32
int gpo_clamp_index_i32(int c, int m) { return c < 0 ? 0 : (c >= m ? m - 1 : c); }

// @function gpo_clamp_index_i64
int64_t gpo_clamp_index_i64(int64_t c, int64_t m) { return c < 0l ? 0l : (c >= m ? m - 1l : c); }

// @function gpo_mirror_index_i32
int gpo_mirror_index_i32(int c, int period, int top) {
    int t = c % period;
    return t < top - t ? t : top - t;
}

// @function gpo_mirror_index_i64
int64_t gpo_mirror_index_i64(int64_t c, int64_t period, int64_t top) {
    int64_t t = c % period;
    return t < top - t ? t : top - t;
}

// @function gpo_wrap_index_once_i32
int gpo_wrap_index_once_i32(int c, int m) { return c >= m ? c - m : c; }

// @function gpo_wrap_index_once_i64
int64_t gpo_wrap_index_once_i64(int64_t c, int64_t m) { return c >= m ? c - m : c; }

// @function gpo_mirror_index_once_i32
int gpo_mirror_index_once_i32(int c, int period, int top) {
    int t = c >= period ? c - period : c;
    return t < top - t ? t : top - t;
}

// @function gpo_mirror_index_once_i64
int64_t gpo_mirror_index_once_i64(int64_t c, int64_t period, int64_t top) {
    int64_t t = c >= period ? c - period : c;
    return t < top - t ? t : top - t;
}
