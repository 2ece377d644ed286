"""The core's mechanisms, observed through counters and introspection
(never timings): hash-consing, common-subexpression elimination,
partitioning under tiny driver limits, the block cache and eviction,
evaluation of only the blocks read, views of views, deep expression chains,
broadcasting and index errors, and writes (copy-on-write, destructive
updates, in-place operators, out=).

Settings used to force the mechanisms: gpupy.set_block_size(16) cuts every
array into 16-element blocks; gpupy.set_cache_bytes(2 * 16 * 4) leaves room
for two float32 blocks; set_driver_option("max_ops", 1) on the software
driver allows one operation per evaluation.
"""

import os

import numpy as np
import pytest

import gpupy as gp
from fresh_python import run_python

F32 = np.float32
BLOCK = 16
TWO_BLOCKS = 2 * BLOCK * 4  # bytes of two float32 blocks


def f32(values):
    return np.asarray(values, dtype=F32)


def ramp(n, start=0.0, dtype=F32):
    return (np.arange(n) + start).astype(dtype)


def ir_ops(array, block=0):
    return [instr["op"] for instr in gp._core._ir(array, block)]


# --- hash-consing ---------------------------------------------------------------------------------

class TestHashConsing:
    def test_equal_expressions_are_one_node(self, gpu):
        a, b = gp.asarray(ramp(10)), gp.asarray(ramp(10, 1))
        x, y = a + b, a + b
        assert x._node_id == y._node_id
        p, q = gp.sin(a) * b, gp.sin(a) * b
        assert p._node_id == q._node_id

    def test_commutative_operands_in_either_order(self, gpu):
        a, b = gp.asarray(ramp(10)), gp.asarray(ramp(10, 1))
        pairs = [(a + b, b + a), (a * b, b * a), (gp.maximum(a, b), gp.maximum(b, a)),
                 (gp.hypot(a, b), gp.hypot(b, a)), (a == b, b == a), (gp.logical_and(a, b), gp.logical_and(b, a)),
                 (gp.add(a, b), np.add(b, a))]
        for x, y in pairs:
            assert x._node_id == y._node_id

    def test_non_commutative_operands_are_distinct(self, gpu):
        a, b = gp.asarray(ramp(10)), gp.asarray(ramp(10, 1))
        x, y = a - b, b - a
        assert x._node_id != y._node_id
        p, q = a / b, b / a
        assert p._node_id != q._node_id
        gpu.assert_same(x, ramp(10) - ramp(10, 1))
        gpu.assert_same(y, ramp(10, 1) - ramp(10))

    def test_constants_by_value(self, gpu):
        a = gp.asarray(ramp(10))
        # 2, 2.0 and float32(2) all become the float32 constant 2.
        forms = [a * 2, 2 * a, a * 2.0, a * np.float32(2), np.float32(2) * a]
        assert len({x._node_id for x in forms}) == 1
        x, y = a + 1, a + 2
        assert x._node_id != y._node_id
        # -0.0 and 0.0 are different constants (their sums differ at a = -0).
        z = gp.asarray(f32([-0.0, 1.0]))
        p, n = z + 0.0, z + (-0.0)
        assert p._node_id != n._node_id
        gpu.assert_same(p, f32([-0.0, 1.0]) + F32(0.0))
        gpu.assert_same(n, f32([-0.0, 1.0]) + F32(-0.0))

    def test_equal_values_of_other_dtypes_are_other_nodes(self, gpu):
        a = gp.asarray(np.arange(6, dtype=np.int8))
        x, y, z = a + np.int8(1), a + np.int16(1), a + 1
        assert x._node_id == z._node_id  # the weak 1 is the int8 constant 1
        assert x._node_id != y._node_id
        assert (x.dtype, y.dtype) == (np.int8, np.int16)
        gpu.assert_same(y, np.arange(6, dtype=np.int8) + np.int16(1))

    def test_same_view_same_node_other_view_other_node(self, gpu):
        a = gp.asarray(ramp(10))
        x, y, z = a[::2] + 1, a[::2] + 1, a[1::2] + 1
        assert x._node_id == y._node_id
        assert x._node_id != z._node_id
        gpu.assert_same(z, ramp(10)[1::2] + F32(1))

    def test_distinct_arrays_are_distinct_nodes(self, gpu):
        host = ramp(10)
        a, b = gp.asarray(host), gp.asarray(host)
        assert a._node_id != b._node_id
        x, y = a + 1, b + 1
        assert x._node_id != y._node_id

    def test_sharing_is_counted(self, gpu):
        a = gp.asarray(ramp(10))
        x = a + 1
        gp.reset_stats()
        y = a + 1
        assert gp.stats()["nodes_shared"] >= 1
        assert x._node_id == y._node_id

    def test_a_chain_of_fresh_results_asks_the_table_only_for_constants(self, gpu):
        # No expression over a node can exist while that node is operand of
        # nothing: each step of a chain over the previous step's fresh
        # result is made without a lookup (only its new constant is looked
        # up), and the values are NumPy's.
        host = ramp(64)
        d = gp.asarray(host)
        want = host.copy()
        d = d * F32(1.5)  # d (an array held by nothing) -> skipped as well
        want = want * F32(1.5)
        before = gp.stats()["node_lookups"]
        for i in range(50):
            d = d * F32(1.25) + F32(i)
            want = want * F32(1.25) + F32(i)
        assert gp.stats()["node_lookups"] - before == 100  # the 100 constants, not the 100 ops
        gpu.assert_same(d, want)

    def test_a_written_array_is_not_confused_with_its_old_value(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        x = a * 3
        np.asarray(x)
        a[0] = 100  # x depends on a: copy-on-write
        y = a * 3
        assert y._node_id != x._node_id
        host2 = host.copy()
        host2[0] = 100
        gpu.assert_same(y, host2 * F32(3))
        gpu.assert_same(x, host * F32(3))

    def test_nodes_are_released(self, gpu):
        base = gp._core._live_hashed_nodes()
        a = gp.asarray(ramp(10))
        xs = [a + i for i in range(50)]
        assert gp._core._live_hashed_nodes() >= base + 50
        del xs
        assert gp._core._live_hashed_nodes() <= base + 1  # at most a's own entry


# --- common-subexpression elimination -----------------------------------------------------------

class TestCSE:
    def test_repeated_subexpression_is_computed_once(self, gpu):
        a, b = gp.asarray(ramp(10)), gp.asarray(ramp(10, 1))
        c = (a + b) * (a + b)
        ops = ir_ops(c)
        assert ops.count("add") == 1
        assert ops.count("multiply") == 1
        assert ops.count("load") == 2
        gpu.assert_same(c, (ramp(10) + ramp(10, 1)) * (ramp(10) + ramp(10, 1)))

    def test_commuted_subexpression_is_computed_once(self, gpu):
        a, b = gp.asarray(ramp(10)), gp.asarray(ramp(10, 1))
        c = gp.sin(a * b) - gp.sin(b * a)
        ops = ir_ops(c)
        assert ops.count("multiply") == 1
        assert ops.count("sin") == 1
        gpu.assert_same(c, np.zeros(10, F32))

    def test_same_view_loaded_once(self, gpu):
        a = gp.asarray(ramp(20))
        c = a[::2] * a[::2] + a[::2]
        ops = ir_ops(c)
        assert ops.count("load") == 1
        h = ramp(20)[::2]
        gpu.assert_same(c, h * h + h)

    def test_cse_shortens_the_ir(self, gpu):
        a = gp.asarray(ramp(10))
        shared = gp.exp(a) + 1
        c = shared * shared * shared
        # one load, one exp, one constant, one add, two multiplies
        assert len(gp._core._ir(c)) == 6
        h = np.exp(ramp(10)) + F32(1)
        gpu.assert_same(c, h * h * h, ulp=8)


class TestRewrites:
    @pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8])
    def test_square_of_an_absolute_value_squares_the_value(self, gpu, dtype):
        if dtype == np.float32:
            h = np.array([-0.0, 0.0, -1.5, 2.5, np.inf, -np.inf, np.nan, -3e19, 1e-30], dtype)
        else:
            info = np.iinfo(dtype)
            h = np.array([info.min, info.min + 1, -1, 0, 1, 7, info.max], dtype) if info.min else \
                np.array([0, 1, 15, 16, 255], dtype)
        with np.errstate(all="ignore"):
            want = np.abs(h) ** 2
        a = gp.asarray(h)
        with np.errstate(all="ignore"):  # (-3e19 ** 2 overflows float32, as NumPy's does)
            got = gp.abs(a) ** 2
        assert "absolute" not in ir_ops(got)
        gpu.assert_same(got, want)
        with np.errstate(all="ignore"):
            want = np.square(np.absolute(h))
            got = gp.square(gp.absolute(a))
        gpu.assert_same(got, want)

    def test_a_view_of_an_absolute_value_is_left_alone(self, gpu):
        h = ramp(10, -5)
        got = gp.abs(gp.asarray(h))[::2] ** 2
        gpu.assert_same(got, np.abs(h)[::2] ** 2)


# --- partitioning under the software driver's max_ops ---------------------------------------------

def _expression(xp, a, b):
    return ((a + b) * a - b) / (a + 3) + xp.sqrt(b)


class TestPartitioning:
    def test_one_evaluation_without_limits(self, software):
        ha, hb = ramp(40), ramp(40, 1)
        a, b = gp.asarray(ha), gp.asarray(hb)
        gp.reset_stats()
        r = _expression(gp, a, b)
        software.assert_same(r, _expression(np, ha, hb))
        s = gp.stats()
        assert s["evaluations"] == 1
        assert s["collapses"] == 0
        # The planning time is counted apart (host overhead), and reset.
        assert s["planning_seconds"] > 0
        gp.reset_stats()
        assert gp.stats()["planning_seconds"] == 0

    @pytest.mark.parametrize("max_ops", [1, 2, 3])
    def test_max_ops_splits_the_expression(self, software, max_ops):
        software.option("max_ops", max_ops)
        ha, hb = ramp(40), ramp(40, 1)
        a, b = gp.asarray(ha), gp.asarray(hb)
        gp.reset_stats()
        r = _expression(gp, a, b)
        software.assert_same(r, _expression(np, ha, hb))
        s = gp.stats()
        # 7 operations (add, multiply, subtract, add, divide, sqrt, add;
        # loads and constants are not operations), at most max_ops each time
        assert s["evaluations"] >= -(-7 // max_ops)
        assert s["collapses"] >= 1
        assert s["check_ir_calls"] >= 1

    def test_a_chain_built_again_is_staged_as_before(self, gpu):
        """A long chain built again with other constants (a loop run again)
        is staged as the first one was: each pass checked exactly once, not
        partitioned again; another driver configuration partitions anew."""
        gpu.option("max_ops", 12)

        def chain(xp, a, first):
            shared = a * a  # read by every step: the bounds count it each time
            acc = a
            for k in range(40):
                acc = xp.maximum(acc, shared + (first + k))
            return acc

        def run(first):
            h = ramp(64, -5)
            gp.reset_stats()
            gpu.assert_same(chain(gp, gp.asarray(h), first), chain(np, h, first))
            return gp.stats()

        first = run(0.5)
        assert first["stagings_reused"] == 0
        assert first["collapses"] > 0
        assert first["check_ir_calls"] > first["collapses"] + 1
        again = run(100.5)
        assert again["stagings_reused"] == 1
        assert again["collapses"] == first["collapses"]
        assert again["evaluations"] == first["evaluations"]
        assert again["check_ir_calls"] == again["collapses"] + 1  # one per pass
        gpu.option("max_ops", 12)  # the same limit, but set again: another configuration
        assert run(7.5)["stagings_reused"] == 0

    def test_max_ops_one_evaluates_each_distinct_operation_once(self, software):
        software.option("max_ops", 1)
        ha, hb = ramp(10), ramp(10, 1)
        a, b = gp.array(ha), gp.array(hb)
        gp.reset_stats()
        c = (a + b) * (a + b)
        software.assert_same(c, (ha + hb) * (ha + hb))
        # the shared add once, the multiply once
        assert gp.stats()["evaluations"] == 2

    def test_max_ops_applies_per_block(self, software):
        software.option("max_ops", 1)
        gp.set_block_size(BLOCK)
        ha, hb = ramp(5 * BLOCK), ramp(5 * BLOCK, 7)
        a, b = gp.asarray(ha), gp.asarray(hb)
        gp.reset_stats()
        r = gp.sqrt(a * b + a)
        software.assert_same(r, np.sqrt(ha * hb + ha))
        assert gp.stats()["evaluations"] >= 3 * 5

    def test_environment_variable_sets_max_ops(self, software):
        code = ("import numpy as np, gpupy as gp\n"
                "a = gp.asarray(np.arange(10, dtype=np.float32))\n"
                "r = ((a + 1) * a - 2) / (a + 3)\n"
                "h = np.arange(10, dtype=np.float32)\n"
                "assert np.array_equal(np.asarray(r), ((h + 1) * h - 2) / (h + 3))\n"
                "s = gp.stats()\n"
                "print(gp.driver(), s['evaluations'], s['collapses'])\n")
        # (Ten elements would be computed by NumPy at once: eager threshold 0.)
        proc = run_python(["-c", code], dict(os.environ, GPUPY_DRIVER="software", GPUPY_SOFTWARE_MAX_OPS="1",
                                             GPUPY_EAGER_ELEMENTS="0"))
        assert proc.returncode == 0, proc.stderr
        name, evaluations, collapses = proc.stdout.split()
        assert name == "software"
        assert int(evaluations) >= 5
        assert int(collapses) >= 1

    @pytest.mark.parametrize("name, value", [("GPUPY_SOFTWARE_MAX_OPS", "abc"), ("GPUPY_SOFTWARE_MAX_OPS", "0"),
                                             ("GPUPY_SOFTWARE_THREADS", "2.5"), ("GPUPY_SOFTWARE_MAX_BYTES", "-1")])
    def test_a_wrong_environment_setting_is_said_not_ignored(self, software, name, value):
        """The driver's settings are read as the core's are: a value that is
        not an integer in range is an error naming it, never the default."""
        code = "import gpupy as gp; print(gp.driver())"
        proc = run_python(["-c", code], dict(os.environ, GPUPY_DRIVER="software", **{name: value}))
        assert proc.returncode != 0
        assert "DriverError" in proc.stderr and f"{name} must be an integer" in proc.stderr and repr(value) in proc.stderr

    def test_bad_option_is_rejected(self, software):
        with pytest.raises(ValueError):
            gp.set_driver_option("max_ops", 0)
        with pytest.raises(ValueError):
            gp.set_driver_option("no_such_option", 1)


# --- settings from the environment ----------------------------------------------------------------
# Every setting is read by one rule (gpupy/setting_values.hpp): unset or
# empty is the default; any other value must be one the setting accepts,
# else starting says so, naming the variable and what it accepts.

@pytest.mark.parametrize("name, value", [("GPUPY_BLOCK_SIZE", "abc"), ("GPUPY_BLOCK_SIZE", "0"),
                                         ("GPUPY_CACHE_BYTES", "1.5"), ("GPUPY_HOST_ELEMENTS", "-1"),
                                         ("GPUPY_EAGER_ELEMENTS", "many")])
def test_a_wrong_core_setting_is_said_not_ignored(name, value):
    proc = run_python(["-c", "import gpupy as gp; print(gp.driver())"],
                      dict(os.environ, GPUPY_DRIVER="software", **{name: value}))
    assert proc.returncode != 0
    assert f"{name} must be an integer >= " in proc.stderr and repr(value) in proc.stderr, proc.stderr


@pytest.mark.parametrize("name, value, accepted", [
    ("GPUPY_EGL_DEVICE", "first", "an integer >= 0"),
    ("GPUPY_EGL_DEVICE", "-1", "an integer >= 0"),
    ("GPUPY_GL_CHECK_PROGRAM_KEYS", "yes", "one of '0', '1', got"),
    ("GPUPY_FLOAT32_SUBNORMALS", "sometimes", "one of 'flush', 'exact', got"),
    ("GPUPY_GL_FLOAT_PROBE", "fast", "a comma-separated list of 'subnormals_flushed', "),
])
def test_a_wrong_opengl_setting_is_said_not_ignored(opengl, name, value, accepted):
    proc = run_python(["-c", "import gpupy as gp; print(gp.driver())"],
                      dict(os.environ, GPUPY_DRIVER="opengl", **{name: value}))
    assert proc.returncode != 0 and "DriverError" in proc.stderr, proc.stderr
    assert f"{name} must be {accepted}" in proc.stderr and repr(value) in proc.stderr, proc.stderr


def test_an_empty_eager_threshold_setting_is_unset():
    """GPUPY_EAGER_ELEMENTS is read where the core reads its settings:
    empty is unset for the calibration too, which may then set it."""
    code = "from gpupy import _calibration; print(_calibration._eager_set_by_user)"
    for value, chosen in (("", "False"), ("7", "True")):
        proc = run_python(["-c", code], dict(os.environ, GPUPY_DRIVER="software", GPUPY_EAGER_ELEMENTS=value))
        assert proc.returncode == 0 and proc.stdout.split() == [chosen], proc.stderr


# --- the block cache ------------------------------------------------------------------------------

class TestBlockCache:
    def test_two_block_cache_evicts_and_stays_right(self, gpu):
        gp.set_block_size(BLOCK)
        gp.set_cache_bytes(TWO_BLOCKS)
        ha, hb, hc = ramp(10 * BLOCK), ramp(10 * BLOCK, 3), ramp(10 * BLOCK, -50)
        a, b, c = gp.asarray(ha), gp.asarray(hb), gp.asarray(hc)
        gp.reset_stats()
        r = (a + b) * c - a
        gpu.assert_same(r, (ha + hb) * hc - ha)
        s = gp.stats()
        assert s["evictions"] > 0
        assert s["cached_bytes"] <= TWO_BLOCKS
        # the inputs are still right after their blocks were evicted
        gpu.assert_same(a * 1, ha)
        gpu.assert_same(b + c, hb + hc)

    def test_evicted_dirty_intermediates_are_read_back(self, software):
        software.option("max_ops", 1)
        gp.set_block_size(BLOCK)
        gp.set_cache_bytes(TWO_BLOCKS)
        ha, hb = ramp(6 * BLOCK), ramp(6 * BLOCK, 1)
        a, b = gp.asarray(ha), gp.asarray(hb)
        gp.reset_stats()
        t = a * b  # intermediates evaluated on their own (max_ops 1) ...
        u = t + a
        r = u * t - b
        software.assert_same(r, (ha * hb + ha) * (ha * hb) - hb)
        s = gp.stats()
        # ... and pushed out of a two-block cache before they were read
        assert s["evictions"] > 0
        assert s["eviction_readbacks"] > 0
        software.assert_same(t, ha * hb)
        software.assert_same(u, ha * hb + ha)

    @pytest.mark.parametrize("block,cache,evicts", [(7, 256, True), (64, 2048, False)])
    def test_shared_operand_read_back_after_eviction_is_uploaded_not_recomputed(self, gpu, block, cache, evicts):
        # A reduction stores its shared operand (x2) first; with 7-element
        # blocks and a 256-byte cache those blocks are evicted (read back)
        # before they are needed again. Evaluating a block whose values are
        # on the host is an upload: it used to plan a copy of the block onto
        # itself ("block cached twice"). The second setting, with larger
        # blocks, evicts nothing.
        gp.set_block_size(block)
        gp.set_cache_bytes(cache)
        hv = np.arange(100, dtype=np.int32) % 7 - 3
        v = gp.asarray(hv)
        x1 = (v > 0) * 2
        x2 = gp.where(x1 > 1, x1, 0)
        r = x2.argmax()
        hx1 = (hv > 0) * 2
        hx2 = np.where(hx1 > 1, hx1, 0)
        gpu.assert_same(r, np.asarray(hx2.argmax()))
        gpu.assert_same(x2, hx2)
        gpu.assert_same(x1, hx1)
        if evicts:  # the tiny cache must have pushed x2's blocks out
            assert gp.stats()["evictions"] > 0

    def test_cache_never_exceeds_budget_between_evaluations(self, gpu):
        gp.set_block_size(BLOCK)
        gp.set_cache_bytes(TWO_BLOCKS)
        hs = [ramp(4 * BLOCK, k) for k in range(6)]
        xs = [gp.asarray(h) for h in hs]
        for x, h in zip(xs, hs):
            gpu.assert_same(x * 2 + 1, h * F32(2) + F32(1))
            assert gp.stats()["cached_bytes"] <= TWO_BLOCKS

    def test_shrinking_the_budget_keeps_values(self, gpu):
        gp.set_block_size(BLOCK)
        ha = ramp(8 * BLOCK)
        a = gp.asarray(ha)
        r = gp.exp(a / 100)
        assert r[0] == F32(1)  # block 0 evaluated and cached
        gp.set_cache_bytes(1)  # less than any block: everything leaves the device
        assert gp.stats()["cached_bytes"] == 0
        ref = np.exp(ha / F32(100))
        got = np.asarray(r)
        assert np.array_equal(got, np.asarray(gp.exp(gp.asarray(ha) / 100)))
        assert gpu.max_ulp(got, ref) <= 2

    def test_block_size_change_keeps_values(self, gpu):
        ha = ramp(100)
        a = gp.asarray(ha)
        r = a * 3 + 1
        r._flush()
        gp.set_block_size(7)
        gpu.assert_same(r, ha * F32(3) + F32(1))
        gpu.assert_same(r[::-3] + a[::-3], (ha * F32(3) + F32(1))[::-3] + ha[::-3])

    def test_switching_drivers_keeps_values(self, gpu):
        gp.set_block_size(BLOCK)
        ha = ramp(4 * BLOCK)
        a = gp.asarray(ha)
        r = gp.sqrt(a) + a
        assert r[3] == np.sqrt(F32(3)) + F32(3)  # block 0 on this driver, dirty on its device
        other = "software" if gpu.name == "opengl" else "opengl"
        try:
            gp.use_driver(other)
        except gp.DriverError as exc:
            pytest.skip(f"{other} driver unavailable: {exc}")
        gpu.assert_same(r, np.sqrt(ha) + ha)
        gpu.assert_same(r * 2, (np.sqrt(ha) + ha) * F32(2))


# --- the OpenGL driver's program cache and limits -----------------------------------------------

def _describe_limit(key):
    for line in gp._core.driver_describe().splitlines():
        name, _, value = line.strip().partition(":")
        if name == key:
            return int(value)
    return None


class TestOpenGLPrograms:
    def test_all_blocks_share_one_program(self, opengl):
        gp.set_block_size(64)
        h = ramp(640, 0.25)
        a = gp.asarray(h)
        gp.reset_stats()
        opengl.assert_same(a * 2 + 1, h * F32(2) + F32(1))
        s = gp.stats()
        assert s["evaluations"] == 10
        assert s["programs_compiled"] <= 1
        assert s["programs_compiled"] + s["program_cache_hits"] == 10

    def test_other_constants_and_arrays_reuse_the_program(self, opengl):
        gp.set_block_size(64)
        h = ramp(640)
        a, b = gp.asarray(h), gp.asarray(h[::-1].copy())
        np.asarray(a * 2 + 1)
        gp.reset_stats()
        opengl.assert_same(b * 3 + 5, h[::-1] * F32(3) + F32(5))
        assert gp.stats()["programs_compiled"] == 0
        gp.reset_stats()
        for i in range(5):
            opengl.assert_same((a - i) * b - (i + 0.5), (h - F32(i)) * h[::-1] - F32(i + 0.5))
        assert gp.stats()["programs_compiled"] <= 1

    def test_commutative_operand_order_does_not_depend_on_history(self, opengl):
        """`a + c` is one IR structure (so one program) whatever the
        constant: here the float32 constant 7.25 is older than `a` (kept
        alive by `keep`) and 3.125 is new, which must not change the order
        of add's operands."""
        keep = gp.asarray(np.ones(3, F32)) + 7.25
        h = ramp(64)
        a = gp.asarray(h)
        old_const, new_const = a + 7.25, a + 3.125
        structure = [[(i["op"], i["args"]) for i in gp._core._ir(x)] for x in (old_const, new_const)]
        assert structure[0] == structure[1]
        opengl.assert_same(old_const, h + F32(7.25))
        opengl.assert_same(new_const, h + F32(3.125))
        del keep

    def test_more_leaves_than_texture_units_are_partitioned(self, opengl):
        units = _describe_limit("limit_textures")
        assert units is not None and units > 0
        hs = [np.full(50, k, F32) for k in range(units + 8)]
        t, expect = gp.asarray(hs[0]), hs[0]
        for h in hs[1:]:
            t, expect = t + gp.asarray(h), expect + h
        gp.reset_stats()
        opengl.assert_same(t, expect)
        assert gp.stats()["collapses"] >= 1

    def test_more_instructions_than_the_limit_are_partitioned(self, opengl):
        limit = _describe_limit("limit_instructions")
        assert limit is not None and limit > 0
        h = ramp(50)
        t, expect = gp.asarray(h), h
        for i in range(limit + 200):
            t, expect = t + 1, expect + F32(1)
        gp.reset_stats()
        opengl.assert_same(t, expect)
        assert gp.stats()["collapses"] >= 1
        assert gp.stats()["evaluations"] >= 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_], ids=str)
def test_arrays_over_several_texture_rows(gpu, dtype):
    """Arrays longer than a block texture's row (OpenGL stores a block as a
    2-D texture 4096 texels wide), read contiguously, reversed, offset,
    strided and transposed."""
    width = _describe_limit("block_texture_width") or 4096
    n = 3 * width + 17
    rng = np.random.default_rng(3)
    x = rng.integers(0 if dtype == np.bool_ else -100, 2 if dtype == np.bool_ else 100, n).astype(dtype)
    y = rng.integers(1, 2 if dtype == np.bool_ else 100, n).astype(dtype)
    gx, gy = gp.asarray(x), gp.asarray(y)
    gpu.assert_same(gx * gy, x * y)
    gpu.assert_same(gx[::-1] ^ gy if dtype == np.bool_ else gx[::-1] - gy, x[::-1] ^ y if dtype == np.bool_ else
                    x[::-1] - y)
    gpu.assert_same(gx[5:] == gy[:-5], x[5:] == y[:-5])
    gpu.assert_same(gp.maximum(gx[::7], gy[3::7]), np.maximum(x[::7], y[3::7]))
    cut = n - n % 130
    m, gm = x[:cut].reshape(-1, 130), gx[:cut].reshape(-1, 130)
    gpu.assert_same(gp.minimum(gm.T, gm.T[::-1]), np.minimum(m.T, m.T[::-1]))


# --- evaluating only what is read -----------------------------------------------------------------

class TestPartialEvaluation:
    def test_one_element_of_ten_blocks_evaluates_one_block(self, gpu):
        gp.set_block_size(BLOCK)
        hx = ramp(10 * BLOCK)
        x = gp.asarray(hx)
        y = x * 2 + 1
        gp.reset_stats()
        v = y[37]
        assert v == F32(37 * 2 + 1)
        assert type(v) is np.float32
        assert gp.stats()["evaluations"] == 1
        assert y._evaluated_count() == BLOCK
        assert not y._is_complete()
        # a neighbour in the same block costs nothing more
        assert y[40] == F32(81)
        assert gp.stats()["evaluations"] == 1
        # another block: one more evaluation
        assert y[150] == F32(301)
        assert gp.stats()["evaluations"] == 2
        assert y._evaluated_count() == 2 * BLOCK
        gpu.assert_same(y, hx * F32(2) + F32(1))
        assert y._is_complete()
        assert gp.stats()["evaluations"] == 10

    def test_reading_a_slice_evaluates_only_its_blocks(self, gpu):
        gp.set_block_size(BLOCK)
        hx = ramp(10 * BLOCK)
        y = gp.asarray(hx) - 5
        gp.reset_stats()
        # (Read, not exported: np.asarray would export the array's bytes
        # writable, which evaluates all of it, test_exports.py.)
        part = y[20:30].__array__()
        assert np.array_equal(part, hx[20:30] - F32(5))
        assert gp.stats()["evaluations"] <= 1
        assert BLOCK // 2 <= y._evaluated_count() <= BLOCK

    @pytest.mark.parametrize("key", [np.s_[5:], np.s_[::-1], np.s_[-7::-1]],
                             ids=["offset", "reversed", "reversed_offset"])
    def test_misaligned_view_is_split_once_per_storage_boundary(self, gpu, key):
        """Each output block of a view whose blocks straddle two storage
        blocks needs at most two pieces (one per storage block it reads),
        not a subdivision that grows with the block size."""
        gp.set_block_size(64)
        h = ramp(1530, 0.5)
        v = gp.asarray(h)[key]
        gp.reset_stats()
        gpu.assert_same(gp.sqrt(v), np.sqrt(h[key]))
        out_blocks = -(-v.size // 64)
        assert gp.stats()["evaluations"] <= 2 * out_blocks

    def test_scalar_conversion_reads_one_block(self, gpu):
        gp.set_block_size(BLOCK)
        y = gp.asarray(ramp(10 * BLOCK)) * 0.5
        gp.reset_stats()
        assert float(y[100:101].reshape(())) == 50.0  # a 0-d view of one element
        assert gp.stats()["evaluations"] == 1
        assert y._evaluated_count() <= BLOCK


# --- views of views of expressions ----------------------------------------------------------------

# Each entry builds the same thing from a (6, 10) float32 matrix `m` and a
# length-12 vector `v` with xp = numpy or gpupy: views of expressions of
# views, with negative steps, transposes, reshapes and newaxis.
VIEW_CHAINS = {
    "neg_step_of_expr": lambda xp, m, v: (m * 2 + 1)[::-1, ::-3],
    "transpose_of_expr_of_view": lambda xp, m, v: (m[1:, ::2] - 1).T[::-2],
    "view_of_view_of_view": lambda xp, m, v: (m + 0)[::-1][1:5, 8:1:-2][:, ::-1].T,
    "expr_of_two_views": lambda xp, m, v: m[::-1, :5] * m[:, :4:-1] + m.T[:5, ::-1].T,
    "reshape_of_expr": lambda xp, m, v: (m * 3).reshape(10, 6)[::-3, 1::2],
    "reshape_of_view_of_expr": lambda xp, m, v: (m - 2)[::2].reshape(5, 6)[:, ::-1],
    "reshape_of_transposed_expr": lambda xp, m, v: (m + 1).T.reshape(3, 20)[::-1, ::7],
    "newaxis": lambda xp, m, v: (v * 2)[None, ::-1, None] + m[:, :1, None],
    "ellipsis_and_newaxis": lambda xp, m, v: (m[..., None] * 2)[::-2, ..., 0],
    "broadcast_view": lambda xp, m, v: xp.broadcast_to(v[:10], (6, 10))[::-1] - m,
    "transpose_axes_of_3d": lambda xp, m, v: (m.reshape(2, 3, 10) + 1).transpose(2, 0, 1)[::-4, :, ::-1],
    "expression_of_negative_views": lambda xp, m, v: xp.sqrt(v[::-1] * v[::-2].repeat(2)[:12]) if xp is np else
    xp.sqrt(v[::-1] * xp.asarray(np.asarray(v[::-2]).repeat(2)[:12])),
    "flatten_view_of_expr": lambda xp, m, v: (m[::-1] + v[:10]).reshape(-1)[::-7],
    "double_transpose": lambda xp, m, v: ((m.T * 2).T + m)[2:4],
    "chain_of_expressions_of_views": lambda xp, m, v: (((m[:, ::-1] + 1)[::-1] * 2).T[1:-1] - m.T[1:-1, ::-1])[::3],
    "empty_view_of_expr": lambda xp, m, v: (m * 2)[4:2, ::-1],
    "zero_d_view_of_expr": lambda xp, m, v: (m * 2)[3, 4, ...],
}


@pytest.mark.parametrize("multi_block", [False, True], ids=["one_block", "multi_block"])
@pytest.mark.parametrize("name", sorted(VIEW_CHAINS))
def test_views_of_expressions(gpu, name, multi_block):
    if multi_block:
        gp.set_block_size(7)
    hm = (np.arange(60).reshape(6, 10) * 1.5 - 20).astype(F32)
    hv = (np.arange(12) + 1).astype(F32)
    expected = VIEW_CHAINS[name](np, hm, hv)
    got = VIEW_CHAINS[name](gp, gp.asarray(hm), gp.asarray(hv))
    gpu.assert_same(got, expected)


def _random_view_step(rng, xp_pair):
    """One random step applied to (numpy array, gpupy array) alike."""
    n, g = xp_pair
    kind = rng.integers(0, 6)
    if kind == 0 and n.ndim > 0:
        key = []
        for size in n.shape:
            start = int(rng.integers(-size - 1, size + 1)) if rng.random() < 0.5 else None
            stop = int(rng.integers(-size - 1, size + 1)) if rng.random() < 0.5 else None
            key.append(slice(start, stop, int(rng.choice([1, 2, 3, -1, -2, -3]))))
        key = tuple(key)
        return n[key], g[key]
    if kind == 1:
        perm = tuple(int(p) for p in rng.permutation(n.ndim))
        return n.transpose(perm), g.transpose(perm)
    if kind == 2 and n.ndim < 4:
        key = (slice(None),) * int(rng.integers(0, n.ndim + 1)) + (None,)
        return n[key], g[key]
    if kind == 3 and n.ndim > 1 and n.shape[0] > 0:
        axis = int(rng.integers(0, n.ndim))
        if n.shape[axis] == 0:
            return n, g
        key = (slice(None),) * axis + (int(rng.integers(-n.shape[axis], n.shape[axis])),)
        return n[key], g[key]
    if kind == 4 and n.size > 0:
        shape = [n.size]
        for _ in range(2):
            factors = [d for d in (2, 3, 5) if shape[-1] % d == 0]
            if factors and rng.random() < 0.6:
                d = int(rng.choice(factors))
                shape[-1] //= d
                shape.append(d)
        return n.reshape(shape), g.reshape(shape)
    rev = (slice(None, None, -1),) * n.ndim
    return n * F32(2) - n[rev], g * 2 - g[rev]


@pytest.mark.parametrize("seed", range(40))
def test_random_view_chains(gpu, seed):
    """Random chains of slices (any step), transposes, newaxis, integer
    indices, reshapes and expressions of reversed views, over random block
    sizes: the same as NumPy at every step."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 7, rng.integers(1, 4)))
    base = rng.integers(-50, 50, shape).astype(F32)
    gp.set_block_size(int(rng.choice([3, 7, 16, 1 << 22])))
    pair = (base, gp.asarray(base) + 0)
    for _ in range(6):
        pair = _random_view_step(rng, pair)
        gpu.assert_same(pair[1], pair[0])


def test_deep_chain_of_reversed_views(gpu):
    host = ramp(10)
    x, n = gp.asarray(host), host
    for _ in range(3000):
        x, n = x[::-1] + 1, n[::-1] + F32(1)
    gpu.assert_same(x, n)


def test_views_share_their_array(gpu):
    a = gp.asarray(ramp(12))
    v = a[::-2]
    w = a.reshape(3, 4).T
    assert v._owner_id == a._owner_id == w._owner_id
    v[0] = 99
    host = ramp(12)
    host[-1] = 99
    gpu.assert_same(a, host)
    gpu.assert_same(w, host.reshape(3, 4).T)


# --- deep chains ----------------------------------------------------------------------------------

def test_chain_of_ten_thousand_operations(gpu):
    a = gp.asarray(ramp(64))
    x = a
    for i in range(10_000):
        x = x + 1 if i % 2 == 0 else x * 1
    gpu.assert_same(x, ramp(64) + F32(5000))
    del x  # releasing the chain must not recurse either


def test_destroying_a_deep_unevaluated_chain(gpu):
    a = gp.asarray(ramp(8))
    x = a
    for _ in range(100_000):
        x = x + 1
    del x
    assert gp._core._live_hashed_nodes() < 100


# --- broadcasting errors --------------------------------------------------------------------------

def _numpy_error(fn):
    try:
        with np.errstate(all="ignore"):
            fn()
    except Exception as exc:  # noqa: BLE001 -- any class; compared below
        return exc
    pytest.fail("NumPy did not raise")


def public_class(exc):
    """The exception's most derived class that NumPy users can name: a
    builtin or one of numpy.exceptions (NumPy's own UFuncTypeError and its
    subclasses live in a private module)."""
    for cls in type(exc).__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions"):
            return cls
    return Exception


def _assert_same_error(gp_fn, np_fn, compare_message=True):
    expected = _numpy_error(np_fn)
    with pytest.raises(Exception) as info:
        gp_fn()
    assert isinstance(info.value, public_class(expected)), (
        f"{type(info.value).__name__}: {info.value} (numpy: {type(expected).__name__}: {expected})")
    if compare_message:
        assert str(info.value) == str(expected)


BROADCAST_ERRORS = {
    "add_3_4": (lambda xp: xp.ones(3, F32) + xp.ones(4, F32)),
    "mul_23_32": (lambda xp: xp.ones((2, 3), F32) * xp.ones((3, 2), F32)),
    "three_operands": (lambda xp: xp.where(xp.ones((2, 1), bool), xp.ones(3, F32), xp.ones((4, 1), F32))),
    "ufunc_call": (lambda xp: xp.arctan2(xp.ones((5, 2), F32), xp.ones((5,), F32))),
    "out_not_broadcastable": (lambda xp: xp.add(xp.ones((2, 3), F32), 1, out=xp.zeros(3, F32))),
    "setitem": (lambda xp: xp.zeros(4, F32).__setitem__(slice(None), xp.ones(3, F32))),
    "setitem_2d": (lambda xp: xp.zeros((3, 4), F32).__setitem__(slice(None), xp.ones((3, 2), F32))),
    "inplace": (lambda xp: xp.zeros(3, F32).__iadd__(xp.ones((2, 3), F32))),
    "broadcast_to": (lambda xp: xp.broadcast_to(xp.ones(3, F32), (4,))),
    "comparison": (lambda xp: xp.ones(3, F32) < xp.ones((2, 2), F32)),
}


@pytest.mark.parametrize("name", sorted(BROADCAST_ERRORS))
def test_broadcasting_errors_match_numpy(gpu, name):
    fn = BROADCAST_ERRORS[name]
    _assert_same_error(lambda: fn(gp), lambda: fn(np))


class TestReductionOperands:
    """A reduction fuses its operand expression into its first pass; when the
    operand is also held elsewhere it is stored first, so using it again
    reads it instead of computing it a second time."""

    def test_only_a_held_operand_costs_an_evaluation_of_its_own(self, gpu):
        a = gp.asarray(ramp(1000))
        gp.reset_stats()
        # (Not inside an assert: pytest's rewriting would hold the temporary.)
        m = float(gp.sqrt(a * 3 + 1).max())
        fused = gp.stats()["evaluations"]
        assert m == np.sqrt(ramp(1000) * F32(3) + F32(1)).max()
        held = gp.sqrt(a * 5 + 1)
        gp.reset_stats()
        m = float(held.max())
        assert gp.stats()["evaluations"] == fused + 1
        assert m == np.sqrt(ramp(1000) * F32(5) + F32(1)).max()

    def test_an_operand_the_user_holds_is_stored_and_read_back(self, gpu):
        h = ramp(1000)
        d = gp.sqrt(gp.asarray(h) * 3 + 1)
        m = d.max()
        hd = np.sqrt(h * F32(3) + F32(1))
        gpu.assert_same(m, hd.max())
        # d / m reads d's stored values: no multiply or sqrt left to run.
        assert sorted(ir_ops(d / m)) == ["divide", "load", "load"]
        gpu.assert_same(d / m, hd / hd.max())

    def test_an_operand_shared_by_two_reductions_is_computed_once(self, gpu):
        h = ramp(3000, 1)
        x = gp.log(gp.asarray(h)) * 2
        s, p = gp.sum(x), gp.max(x)
        hx = np.log(h) * F32(2)
        gpu.assert_same(p, hx.max(), ulp=1)
        assert "log" not in ir_ops(x + 1)  # x was stored for the other reduction
        np.testing.assert_allclose(float(s), hx.astype(np.float64).sum(), rtol=1e-5)


# --- writes ---------------------------------------------------------------------------------------

class TestWrites:
    def test_copy_on_write_keeps_dependents(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        b = a + 1
        a[0] = 100
        assert b[0] == F32(1)
        gpu.assert_same(b, host + F32(1))
        expect_a = host.copy()
        expect_a[0] = 100
        gpu.assert_same(a, expect_a)

    def test_copy_on_write_with_partly_evaluated_dependent(self, gpu):
        gp.set_block_size(BLOCK)
        host = ramp(4 * BLOCK)
        a = gp.asarray(host.copy())
        b = a * 2
        assert b[1] == F32(2)  # block 0 of b evaluated, the rest not
        a[3 * BLOCK:] = -1
        gpu.assert_same(b, host * F32(2))

    def test_copy_on_write_of_a_view_target(self, gpu):
        host = ramp(12).reshape(3, 4)
        a = gp.asarray(host.copy())
        dep = a.T * 1
        a[1, ::-2] = 7
        expect = host.copy()
        expect[1, ::-2] = 7
        gpu.assert_same(a, expect)
        gpu.assert_same(dep, host.T * F32(1))

    def test_destructive_write_when_nothing_depends(self, gpu):
        a = gp.asarray(ramp(10))

        def storage(x):
            return np.asarray(x).__array_interface__["data"][0]

        before = storage(a)
        a[0] = 100
        assert storage(a) == before  # updated in place, no copy
        b = a + 1
        a[1] = 50  # b depends on a: copied first
        assert storage(a) != before
        assert b[1] == F32(2)

    def test_destructive_write_drops_cached_blocks(self, gpu):
        host = ramp(40)
        a = gp.asarray(host.copy())
        t = a * 2
        t._flush()  # a's block and a[::2]'s are on the device now
        u = a[::2] + 0
        u._flush()
        del t, u
        a[0] = 100
        host[0] = 100
        gpu.assert_same(a * 2, host * F32(2))
        gpu.assert_same(a[::2] + 0, host[::2] + F32(0))

    def test_whole_array_assignment_is_lazy_and_keeps_old_value_for_dependents(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        b = a - 1
        a[...] = a * 10
        gpu.assert_same(a, host * F32(10))
        gpu.assert_same(b, host - F32(1))
        a[:] = 3
        gpu.assert_same(a, np.full(10, 3, F32))

    def test_write_through_a_view_is_seen_by_other_views(self, gpu):
        host = ramp(12)
        a = gp.asarray(host.copy())
        v1 = a[2:10]
        v2 = a.reshape(3, 4)
        v1[::3] = -5
        host[2:10][::3] = -5
        gpu.assert_same(v2, host.reshape(3, 4))
        gpu.assert_same(a, host)

    def test_overlapping_partial_write(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        a[1:] = a[:-1]
        host[1:] = host[:-1].copy()
        gpu.assert_same(a, host)
        a[::-1] = a
        host[::-1] = host.copy()
        gpu.assert_same(a, host)

    def test_assigning_a_view_of_itself(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        a[...] = a[::-1]
        gpu.assert_same(a, host[::-1])
        m_host = ramp(16).reshape(4, 4)
        m = gp.asarray(m_host.copy())
        m[:] = m.T
        gpu.assert_same(m, m_host.T)
        a = gp.asarray(host.copy())
        a += a[::-1]
        gpu.assert_same(a, host + host[::-1])
        a = gp.asarray(host.copy())
        a[2:] += a[:-2]
        expect = host.copy()
        expect[2:] += host[:-2]
        gpu.assert_same(a, expect)

    def test_completed_expression_is_not_reused_after_a_write(self, gpu):
        """A complete expression drops its operands; a destructive write to
        the operand must not let hash-consing hand back the old result."""
        host = ramp(10)
        a = gp.asarray(host.copy())
        x = a * 2
        np.asarray(x)
        a[0] = 100
        y = a * 2
        expect = host.copy()
        expect[0] = 100
        gpu.assert_same(y, expect * F32(2))
        gpu.assert_same(x, host * F32(2))

    def test_copy_on_write_under_a_tiny_cache(self, gpu):
        gp.set_block_size(4)
        gp.set_cache_bytes(32)
        host = ramp(10)
        a = gp.asarray(host.copy())
        b = gp.sqrt(a) * a
        assert b[1] == F32(1)
        a[5:] = 0
        gpu.assert_same(b, np.sqrt(host) * host)
        expect = host.copy()
        expect[5:] = 0
        gpu.assert_same(a, expect)

    def test_writes_to_zero_d_and_empty(self, gpu):
        z = gp.asarray(np.array(1.5, F32))
        z[()] = 3
        gpu.assert_same(z, np.array(3, F32))
        z[...] = z * 2
        gpu.assert_same(z, np.array(6, F32))
        e = gp.zeros((0, 3), F32)
        e[:] = 5
        gpu.assert_same(e, np.zeros((0, 3), F32))

    def test_setitem_with_broadcast_and_cast(self, gpu):
        host = np.zeros((3, 4), np.int32)
        a = gp.zeros((3, 4), np.int32)
        a[1] = 2.7
        host[1] = 2.7
        a[:, 1:3] = np.array([[-1.9], [5.5], [3.2]])
        host[:, 1:3] = np.array([[-1.9], [5.5], [3.2]])
        a[2, ::2] = gp.asarray(np.array([True, False]))
        host[2, ::2] = np.array([True, False])
        gpu.assert_same(a, host)

    def test_inplace_operators(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        keep = a
        old = a * 1
        a += 1
        a *= 3
        a -= gp.asarray(ramp(10, 2))
        a /= 2
        a **= 2
        assert a is keep
        expect = ((((host + F32(1)) * F32(3)) - ramp(10, 2)) / F32(2)) ** 2
        gpu.assert_same(a, expect)
        gpu.assert_same(old, host)

    def test_inplace_integer_operators(self, gpu):
        host = np.arange(-6, 6, dtype=np.int32)
        a = gp.asarray(host.copy())
        a //= 4
        host //= 4
        a %= 3
        host %= 3
        a <<= 2
        host <<= 2
        a |= 1
        host |= 1
        a ^= 7
        host ^= 7
        a &= 12
        host &= 12
        a >>= 1
        host >>= 1
        gpu.assert_same(a, host)

    def test_inplace_on_a_view(self, gpu):
        host = ramp(12).reshape(3, 4)
        a = gp.asarray(host.copy())
        v = a[::2, 1:]
        v += 100
        host[::2, 1:] += 100
        gpu.assert_same(a, host)
        a[1] *= -1
        host[1] *= -1
        gpu.assert_same(a, host)

    def test_inplace_cast_error_matches_numpy(self, gpu):
        def fn(xp):
            x = xp.zeros(3, np.int64)
            x += 1.5
        _assert_same_error(lambda: fn(gp), lambda: fn(np))

    def test_out_argument(self, gpu):
        ha, hb = ramp(10), ramp(10, 1)
        a, b = gp.asarray(ha), gp.asarray(hb)
        out = gp.zeros(10, F32)
        r = gp.add(a, b, out=out)
        assert r is out
        gpu.assert_same(out, ha + hb)
        r = gp.multiply(a, 2, out=(out,))
        assert r is out
        gpu.assert_same(out, ha * F32(2))

    def test_out_argument_view_and_broadcast(self, gpu):
        out_h = np.zeros((3, 10), F32)
        out = gp.zeros((3, 10), F32)
        ha = ramp(10)
        gp.sqrt(gp.asarray(ha), out=out[1])
        np.sqrt(ha, out=out_h[1])
        gp.negative(gp.asarray(ha[::2]), out=out[::2, ::-2])
        np.negative(ha[::2], out=out_h[::2, ::-2])
        gp.add(gp.asarray(ha), 1, out=out)  # broadcast over the rows
        np.add(ha, 1, out=out_h)
        gpu.assert_same(out, out_h)

    def test_out_aliasing_an_input(self, gpu):
        host = ramp(10)
        a = gp.asarray(host.copy())
        gp.add(a[::-1], a, out=a)
        gpu.assert_same(a, host[::-1] + host)

    def test_out_with_cast(self, gpu):
        out = gp.zeros(4, np.float64)
        gp.add(gp.asarray(ramp(4)), 1, out=out)
        gpu.assert_same(out, ramp(4).astype(np.float64) + 1)

    def test_out_cast_error_matches_numpy(self, gpu):
        _assert_same_error(lambda: gp.add(gp.ones(3, F32), 1, out=gp.zeros(3, np.int32)),
                           lambda: np.add(np.ones(3, F32), 1, out=np.zeros(3, np.int32)))

    def test_fill(self, gpu):
        a = gp.asarray(ramp(6))
        dep = a + 0
        a.fill(2.5)
        gpu.assert_same(a, np.full(6, 2.5, F32))
        gpu.assert_same(dep, ramp(6))

    def test_write_to_broadcast_view_is_refused(self, gpu):
        b = gp.broadcast_to(gp.asarray(ramp(3)), (2, 3))
        nb = np.broadcast_to(ramp(3), (2, 3))
        _assert_same_error(lambda: b.__setitem__(0, 1), lambda: nb.__setitem__(0, 1))


# --- domains of more dimensions than an IR holds ----------------------------------------------------

class TestWideDomains:
    """NumPy allows 64 dimensions, an IR 8 (GPUPY_MAX_DIMS): wider domains are
    folded for the driver (size-1 dims dropped, contiguous runs merged,
    leading dims taken out per piece), so they still run on the device."""

    SHAPE = (2, 3, 1, 2, 2, 2, 3, 2, 2, 2, 1)  # 11 dims, 10 of them > 1

    @pytest.mark.parametrize("block", [1 << 22, 7])
    def test_elementwise_and_views_stay_on_the_device(self, gpu, block):
        gp.set_block_size(block)
        h = np.arange(np.prod(self.SHAPE), dtype=np.float32).reshape(self.SHAPE) * np.float32(0.25)
        g = gp.asarray(h)
        gpu.assert_same(g * 2 + 1, h * 2 + 1)
        gpu.assert_same(g.T - g[..., ::-1].T, h.T - h[..., ::-1].T)  # two non-mergeable layouts
        gpu.assert_same(g[::-1, :, :, ::-1] * g[::-1, :, :, ::-1], h[::-1, :, :, ::-1] * h[::-1, :, :, ::-1])
        s = gp.stats()
        assert s["evaluations"] >= 3 and s["fallbacks"] == 0 and s["host_evaluations"] == 0

    @pytest.mark.parametrize("block", [1 << 22, 7])
    def test_reductions_scans_joins_and_tiles(self, gpu, block):
        gp.set_block_size(block)
        h = np.arange(2 ** 10, dtype=np.int64).reshape((2,) * 10)
        g = gp.asarray(h)
        gpu.assert_same(g.sum(axis=(1, 3)), h.sum(axis=(1, 3)))
        gpu.assert_same(g.max(axis=(0, 9)), h.max(axis=(0, 9)))
        gpu.assert_same(g.cumsum(axis=4), h.cumsum(axis=4))
        gpu.assert_same(gp.concatenate([g, g * 2], axis=3), np.concatenate([h, h * 2], axis=3))
        gpu.assert_same(gp.tile(g, (2,) + (1,) * 9), np.tile(h, (2,) + (1,) * 9))
        s = gp.stats()
        assert s["fallbacks"] == 0 and s["host_evaluations"] == 0


def test_a_node_read_through_several_views_is_stored_once_when_costly(gpu):
    # Floyd-Warshall's step reads the previous matrix whole, by row and by
    # column: fused, every level recomputed the one below three times (3^n
    # work; npbench's N = 200 never finished). A costly node met through a
    # second view is stored and read from there.
    n = 24
    h = np.random.default_rng(3).integers(1, 100, (n, n)).astype(np.int32)
    path, want = gp.array(h), h.copy()
    for k in range(n):
        path[:] = gp.minimum(path[:], gp.add.outer(path[:, k], path[k, :]))
        want[:] = np.minimum(want, np.add.outer(want[:, k], want[k, :]))
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(path), want)
    assert gp.stats()["shared_stores"] >= n // 2, gp.stats()
    # A cheap intermediate read through shifted slices is recomputed (an
    # extra pass would cost more than its two ops).
    e = gp.asarray(np.arange(40.0)) * 2 + 1
    gp.reset_stats()
    got = np.asarray(e[:-2] + e[1:-1] + e[2:])
    ref = np.arange(40.0) * 2 + 1
    np.testing.assert_array_equal(got, ref[:-2] + ref[1:-1] + ref[2:])
    assert gp.stats()["shared_stores"] == 0


@pytest.mark.parametrize("size", [1, 5])
def test_a_join_of_one_collapsed_operand_twice(gpu, silent_fallback, size):
    # concatenate([x, x]) with x's op collapsed (one op per evaluation):
    # both parts staged the same block of x, and the second raised "block
    # cached twice" (found by the fuzzer's campaign).
    gpu.option("max_ops", 1)
    h = np.arange(size, dtype=np.int8)
    x = gp.array(h)
    gp.negative(x, out=x)
    joined = gp.concatenate([x, x], axis=0)
    np.testing.assert_array_equal(np.asarray(joined[np.array([], dtype=np.int64)]), np.zeros(0, np.int8))
    np.testing.assert_array_equal(np.asarray(joined), np.concatenate([-h, -h]))


def test_a_whole_assignment_of_a_whole_array_shares_its_value(gpu):
    """`a[:] = b` (b a whole array of a's dtype and shape) makes no copy node:
    a takes b's value, so host values stay host values (the next op on them
    may run at once). Each stays independent: a partial write to either
    copies first."""
    hb = np.arange(12.0).reshape(3, 4)
    a = gp.zeros((3, 4))
    b = gp.array(hb)
    before = gp.stats()["nodes_created"]
    a[:] = b
    assert gp.stats()["nodes_created"] == before
    a[0, 0] = -1.0
    b[1] += 10.0
    np.testing.assert_array_equal(np.asarray(b), hb + np.array([0.0, 10.0, 0.0])[:, None])
    want = hb.copy()
    want[0, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(a), want)
    a[...] = b * 2  # an expression: a takes it as is
    c = gp.zeros((3, 4), dtype=np.float32)
    c[:] = b  # another dtype: a cast
    assert c.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b) * 2)
    np.testing.assert_array_equal(np.asarray(c), np.asarray(b).astype(np.float32))


def test_a_copy_of_a_whole_array_shares_its_value_until_a_write(gpu):
    h = np.arange(10.0)
    a = gp.array(h)
    before = gp.stats()["nodes_created"]
    b = a.copy()
    c = gp.copy(a)
    assert gp.stats()["nodes_created"] == before  # no copy node
    b[2] = -1.0
    a[3:5] *= 10
    c[...] = 7.0
    np.testing.assert_array_equal(np.asarray(a), np.where((h >= 3) & (h < 5), h * 10, h))
    want_b = h.copy()
    want_b[2] = -1.0
    np.testing.assert_array_equal(np.asarray(b), want_b)
    np.testing.assert_array_equal(np.asarray(c), np.full(10, 7.0))
    v = a[::2].copy()  # a view: a real copy, C-ordered
    a[0] = 99.0
    np.testing.assert_array_equal(np.asarray(v), np.where((h >= 3) & (h < 5), h * 10, h)[::2])
    assert v.flags.c_contiguous


class TestDirectWrites:
    """A partial write from another node's host values copies them straight
    into the target's storage (one gather or one scatter, no temporary),
    when nothing else refers to the target; otherwise through a temporary."""

    @staticmethod
    def storage(x):
        return np.asarray(x).__array_interface__["data"][0]

    def test_contiguous_target_and_strided_value(self, gpu):
        h, g = ramp(20), ramp(40) * 3
        a, b = gp.asarray(h.copy()), gp.asarray(g)
        before = self.storage(a)
        gp.reset_stats()
        a[2:12] = b[::4] + 1  # a's slice is contiguous: one gather into it
        assert gp.stats()["direct_writes"] == 1
        want = h.copy()
        want[2:12] = g[::4] + 1
        np.testing.assert_array_equal(np.asarray(a), want)
        assert self.storage(a) == before

    def test_strided_target_and_contiguous_value(self, gpu):
        h = ramp(48).reshape(6, 8)
        a = gp.asarray(h.copy())
        before = self.storage(a)
        gp.reset_stats()
        a[1:-1, 1:-1] = a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1]  # a stencil step: one scatter
        assert gp.stats()["direct_writes"] == 1
        want = h.copy()
        want[1:-1, 1:-1] = h[1:-1, 1:-1] + h[2:, 1:-1] + h[:-2, 1:-1]
        np.testing.assert_array_equal(np.asarray(a), want)
        assert self.storage(a) == before

    @pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "float32", "int64", "float64"])
    @pytest.mark.parametrize("target, value", [
        ((slice(1, -1), slice(1, -1)), (slice(2, None), slice(None, -2))),      # rows of runs, stride 1
        ((slice(None), slice(None, None, 2)), (slice(None, None, -1), slice(3, None))),  # inner stride 2 / -1 rows
        ((slice(None, None, -1), slice(None, None, -3)), (slice(None), slice(None, 3))),  # negative inner stride
    ], ids=["runs", "strided", "reversed"])
    def test_strided_copies_of_every_item_size(self, gpu, dtype, target, value):
        # Runs along the innermost dimension are copied a block at a time
        # (stride 1) or by typed copies of the element's size (else).
        h = (np.arange(6 * 7) % 5).astype(dtype).reshape(6, 7)
        src = (np.arange(6 * 7)[::-1] % 3).astype(dtype).reshape(6, 7)
        a, b = gp.asarray(h.copy()), gp.asarray(src)
        want = h.copy()
        want[target] = src[value]
        a[target] = b[value]
        np.testing.assert_array_equal(np.asarray(a), want)
        np.testing.assert_array_equal(np.asarray(a[target]), want[target])  # a strided read back

    def test_overlapping_or_needed_values_go_through_a_temporary(self, gpu):
        h = ramp(10)
        a = gp.asarray(h.copy())
        before = self.storage(a)
        gp.reset_stats()
        a[1:] = a[:-1]  # the value is the target's own node: NumPy's result, not a smear
        # ... and once read into the temporary, the value no longer needs
        # the old node: the write stays in place, no copy of the array.
        assert gp.stats()["direct_writes"] == 0 and gp.stats()["write_copies"] == 0
        want = h.copy()
        want[1:] = h[:-1]
        np.testing.assert_array_equal(np.asarray(a), want)
        assert self.storage(a) == before
        shared = a.copy()
        lazy = a * 2
        a[0:3] = gp.asarray(ramp(3)) + 100  # others need the old values: copied first
        assert gp.stats()["direct_writes"] == 0 and gp.stats()["write_copies"] == 1
        np.testing.assert_array_equal(np.asarray(shared), want)
        np.testing.assert_array_equal(np.asarray(lazy), want * 2)
        want[0:3] = ramp(3) + 100
        np.testing.assert_array_equal(np.asarray(a), want)


class TestZeroDimElementStores:
    """`y[i] = r` with r a 0-d gpupy result: of y's dtype with its value on
    the host, stored as the element at once, in y's own storage; otherwise
    NumPy's cast and copy-on-write rules as for any value."""

    def test_a_host_result_of_the_same_dtype_is_stored_at_once(self, gpu):
        h = np.arange(10, dtype=np.int64)
        y = gp.asarray(h.copy())
        before = TestDirectWrites.storage(y)
        r = gp.asarray(np.array([4, 2, 9])).max()  # a 0-d result on the host
        shared, lazy = y.copy(), y * 2
        np.asarray(r)
        gp.reset_stats()
        y[3] = r
        y[-1] = y[2, ...]  # a 0-d view of y itself: read before the write
        assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] == 0
        want = h.copy()
        want[3], want[-1] = 9, 2
        np.testing.assert_array_equal(np.asarray(y), want)
        np.testing.assert_array_equal(np.asarray(shared), h)  # copied before the write
        np.testing.assert_array_equal(np.asarray(lazy), h * 2)
        y2 = gp.asarray(h.copy())
        b2 = TestDirectWrites.storage(y2)
        y2[1] = r
        assert TestDirectWrites.storage(y2) == b2

    @pytest.mark.parametrize("value_dtype", ["float64", "int32", "bool"])
    def test_other_dtypes_and_lazy_values_cast_as_numpy(self, gpu, value_dtype):
        h = np.arange(6, dtype=np.int16)
        v = np.array(-3.75 if value_dtype == "float64" else 1).astype(value_dtype)
        y, want = gp.asarray(h.copy()), h.copy()
        want[2] = v
        y[2] = gp.asarray(v)
        np.testing.assert_array_equal(np.asarray(y), want)
        want[4] = v * 2
        y[4] = gp.asarray(v) * 2  # lazy
        np.testing.assert_array_equal(np.asarray(y), want)


class TestScalarFills:
    """`a[view] = one value` where the target may be written in place: the
    view's elements set in host memory at once (stats direct_writes), in
    the target's own storage; where something else needs the old values,
    copied first; NumPy's conversion of the value, and its errors."""

    VIEWS = [slice(10, 20), slice(None, None, 3), slice(None, None, -2), (slice(1, 4), slice(None, None, 2)),
             (slice(None), 2), (slice(2, 2),), (Ellipsis, slice(-1, None)), (slice(None, None, -1), slice(0, 1))]

    @pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float32", "int64", "float64"])
    @pytest.mark.parametrize("view", VIEWS, ids=lambda v: repr(v).replace(" ", ""))
    @pytest.mark.parametrize("value", [3, 2.75, True, np.float32(-1.5)], ids=["int", "float", "bool", "np.float32"])
    def test_every_view_and_dtype(self, gpu, dtype, view, value):
        h = (np.arange(6 * 8) % 7).astype(dtype).reshape(6, 8)
        if isinstance(view, slice):
            h = h.reshape(-1)
        a = gp.asarray(h.copy())
        before = TestDirectWrites.storage(a)
        want = h.copy()
        want[view] = value
        gp.reset_stats()
        a[view] = value
        assert gp.stats()["direct_writes"] == (1 if 0 < want[view].size < h.size else 0)
        assert gp.stats()["evaluations"] == 0
        np.testing.assert_array_equal(np.asarray(a), want)
        assert np.asarray(a).dtype == want.dtype
        assert TestDirectWrites.storage(a) == before

    def test_values_others_need_are_copied_first(self, gpu):
        h = ramp(12)
        a = gp.asarray(h.copy())
        lazy, shared = a * 2, a.copy()
        gp.reset_stats()
        a[3:7] = -1.0
        assert gp.stats()["write_copies"] == 1 and gp.stats()["direct_writes"] == 0
        np.testing.assert_array_equal(np.asarray(lazy), h * 2)
        np.testing.assert_array_equal(np.asarray(shared), h)
        want = h.copy()
        want[3:7] = -1.0
        np.testing.assert_array_equal(np.asarray(a), want)
        # A lazy target is evaluated first, then written.
        b = gp.asarray(h) + 1
        b[::5] = 0.5
        want = h + 1
        want[::5] = 0.5
        np.testing.assert_array_equal(np.asarray(b), want)

    def test_a_view_writes_through_to_its_base(self, gpu):
        h = ramp(10)
        a = gp.asarray(h.copy())
        v = a[2:8]
        v[1:3] = 9.0
        want = h.copy()
        want[3:5] = 9.0
        np.testing.assert_array_equal(np.asarray(a), want)
        np.testing.assert_array_equal(np.asarray(v), want[2:8])

    def test_numpy_errors(self, gpu):
        a = gp.asarray(np.zeros(8, dtype=np.uint8))
        with pytest.raises(OverflowError):
            np.zeros(8, dtype=np.uint8)[1:3] = 300
        with pytest.raises(OverflowError):
            a[1:3] = 300
        with pytest.raises(ValueError):
            np.zeros(8, dtype=np.int32)[1:3] = float("nan")
        with pytest.raises(ValueError):
            gp.asarray(np.zeros(8, dtype=np.int32))[1:3] = float("nan")
        ro = gp.asarray(np.zeros(8))
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            ro[1:3] = 1.0
        np.testing.assert_array_equal(np.asarray(a), np.zeros(8, dtype=np.uint8))


@pytest.mark.parametrize("n", [100_000, 250_007])
def test_a_reduction_whose_first_pass_needs_more_than_64_pieces(gpu, n):
    # With 1024-element blocks, the first pass of a sum folds ~100 blocks
    # into ~400 chunk totals, pieces of at most four chunks each: more than
    # the 64 after which the planner tries binding several blocks per
    # leaf. The rest of the range spans far more blocks than an IR binds
    # (GPUPY_MAX_LEAF_BLOCKS); taking it for a fit made the planner pack
    # a leaf that packing does not shrink, again and again, forever.
    gp.set_block_size(1024)  # (the fixture puts it back)
    gp.set_placement("device")
    try:
        x = np.arange(n, dtype=np.float32) % 7
        assert float(gp.sum(gp.asarray(x))) == float(x.sum(dtype=np.float64))
        np.testing.assert_array_equal(np.asarray(gp.cumsum(gp.asarray(x % 3).astype(np.int64))),
                                      np.cumsum((x % 3).astype(np.int64)))
    finally:
        gp.set_placement("auto")


def test_a_chain_of_stencil_steps_is_planned_in_linear_work(gpu):
    # Each step of a Life-like loop reads the step before through rolls,
    # which need that step stored first: a prerequisite, found top down.
    # When prerequisites ran in the order they were found, every step was
    # planned again down to the bottom of the chain and the planner's work
    # grew as the square of the steps (40 steps: 22 ms of planning).
    grid = (np.random.default_rng(7).random((24, 24)) < 0.35).astype(np.uint8)

    def life(xp, steps):
        z = xp.asarray(grid)
        for _ in range(steps):
            n = xp.roll(z, 1, 0) + xp.roll(z, -1, 0) + xp.roll(z, 1, 1) + xp.roll(z, -1, 1)
            z = ((n == 3) | ((z == 1) & (n == 2))).astype(np.uint8)
        return z

    def planned(steps):
        z = life(gp, steps)
        gp.reset_stats()
        got = np.asarray(z)
        np.testing.assert_array_equal(got, life(np, steps))
        return gp.stats()["planned_items"]

    short, long = planned(8), planned(32)
    assert short > 0
    assert long <= 4 * short * 1.5, (short, long)  # linear: 4x the steps; the square gave 16x


@pytest.mark.parametrize("dtype,n", [(np.uint8, (5 << 20) + 7), (np.float32, 786433), (np.float64, 1 << 19)])
def test_large_conversions_copy_every_byte(dtype, n):
    # Copies of 2 MB and more are split across threads: every part, the
    # last (shorter) one included, lands where it belongs, and the copy is
    # the array's own (a later write to the source does not reach it).
    src = np.random.default_rng(3).integers(0, 250, n).astype(dtype)
    g = gp.array(src)
    want = src.copy()
    src[:] = 0
    np.testing.assert_array_equal(np.asarray(g), want)
    h = gp.asarray(want) + 0  # a lazy expression over a snapshot (want is the caller's, shared)
    np.testing.assert_array_equal(np.asarray(h), want)
