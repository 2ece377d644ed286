"""The OpenGL driver keeps the textures of freed blocks for the next block
of their shape (drivers/opengl/block_textures.hpp): a GPU driver spends
more on allocating and deleting device memory for every result than on a
small dispatch. Reuse must be invisible: a reused block holds what is
written to it, the spares stay within their bound and give way to the
budget."""
import numpy as np
import pytest

from driver_abi import DTYPE_OF_NUMPY, ERROR_NOMEM, OK

F32 = DTYPE_OF_NUMPY[np.dtype(np.float32)]
I32 = DTYPE_OF_NUMPY[np.dtype(np.int32)]
ROW = 4096  # the default block texture width


def pool(driver):
    d = driver.describe()
    return int(d["textures_reused"]), int(d["memory_spare_bytes"])


@pytest.fixture
def gl(opengl):
    """The driver with no spares yet: a budget of 8 bytes keeps none."""
    assert opengl.set_option("block_width", "default") == OK
    assert opengl.set_option("max_bytes", 8) == OK
    assert pool(opengl)[1] == 0
    assert opengl.set_option("max_bytes", "default") == OK
    yield opengl
    assert opengl.set_option("max_bytes", "default") == OK


def test_a_freed_texture_serves_the_next_block_of_its_shape(gl):
    reused, spare = pool(gl)
    first = np.arange(5000, dtype=np.float32)
    a = gl.upload(first)
    gl.free(a)
    assert pool(gl) == (reused, spare + 2 * ROW * 4)  # two rows kept
    # Same texture shape (two rows), other values: the spare, holding them.
    second = np.linspace(-1, 1, 6000, dtype=np.float32)
    b = gl.upload(second)
    assert pool(gl) == (reused + 1, spare)
    np.testing.assert_array_equal(gl.read(b, 0, 6000, np.float32), second)
    gl.free(b)
    # Another format or another height is not that shape.
    c = gl.upload(np.arange(5000, dtype=np.int32))
    d = gl.upload(np.ones(9000, dtype=np.float32))
    assert pool(gl)[0] == reused + 1
    np.testing.assert_array_equal(gl.read(c, 0, 5000, np.int32), np.arange(5000, dtype=np.int32))
    for block in (c, d):
        gl.free(block)


def test_spares_are_bounded_and_give_way_to_the_budget(gl):
    block_bytes = 4 * ROW * 4  # four rows of float32
    # A budget of eight such blocks keeps an eighth of it spare: one block.
    assert gl.set_option("max_bytes", 8 * block_bytes) == OK
    assert pool(gl)[1] <= block_bytes
    blocks = [gl.alloc(F32, 4 * ROW) for _ in range(2)]
    for b in blocks:
        gl.free(b)
    reused, spare = pool(gl)
    assert spare == block_bytes
    # Eight live blocks fill the budget, the first from the spare; a ninth
    # does not fit.
    blocks = [gl.alloc(F32, 4 * ROW) for _ in range(8)]
    assert pool(gl) == (reused + 1, 0)
    rc, _ = gl.alloc_rc(F32, 4 * ROW)
    assert rc == ERROR_NOMEM
    # A spare beside six live blocks gives way to a block of another shape
    # that needs its room.
    for b in blocks[6:]:
        gl.free(b)
    assert pool(gl)[1] == block_bytes
    wide = gl.alloc(I32, 8 * ROW)
    assert pool(gl)[1] == 0
    for b in blocks[:6] + [wide]:
        gl.free(b)
    # A smaller budget deletes the spares beyond its share at once.
    assert pool(gl)[1] == block_bytes
    assert gl.set_option("max_bytes", 4 * block_bytes) == OK
    assert pool(gl)[1] == 0
