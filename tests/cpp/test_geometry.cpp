// Shapes, strides and BuildView (thesis fig. 4.4, core/graph/geometry.hpp).
#include "check.hpp"
#include "core/graph/geometry.hpp"
#include "core/runtime/errors.hpp"

using namespace gpupy;

TEST(c_strides_and_contiguity) {
    CHECK_EQ(c_strides({2, 3, 4}), (Dims{12, 4, 1}));
    CHECK(is_c_contiguous({2, 3}, {3, 1}));
    CHECK(!is_c_contiguous({2, 3}, {1, 2}));
    CHECK(is_c_contiguous({1, 3}, {99, 1}));  // size-1 dims are ignored, as NumPy ignores them
}

TEST(broadcasting_with_numpys_message) {
    CHECK_EQ(broadcast_shapes({{2, 1, 4}, {3, 1}}), (Dims{2, 3, 4}));
    CHECK_EQ(broadcast_strides({3, 1}, {1, 0}, {2, 3, 4}), (Dims{0, 1, 0}));
    try {
        broadcast_shapes({{2, 3}, {4}});
        CHECK(false);
    } catch (const ValueError& e) {
        CHECK_EQ(std::string(e.what()), std::string("operands could not be broadcast together with shapes (2,3) (4,) "));
    }
}

TEST(build_view_composes_a_slice_of_a_transpose) {
    // e = f(child) with e of shape (3, 4); child = the transpose of a (4, 3)
    // owner. The view e[1:, ::2] reads the owner at rows ::2, columns 1:.
    const Dims shape{3, 4};
    const ViewGeometry child{0, {3, 4}, {1, 3}};
    const ViewGeometry outer{1 * 4 + 0, {2, 2}, {4, 2}};
    ViewGeometry out;
    CHECK(compose_views(shape, outer, child, &out));
    CHECK_EQ(out.offset, 1);
    CHECK_EQ(out.shape, (Dims{2, 2}));
    CHECK_EQ(out.strides, (Dims{1, 6}));
}

TEST(build_view_of_a_reshape_it_cannot_express) {
    // A (6,) view of a (2, 3) expression whose operand is a transpose: the
    // merged dimension is not contiguous in the operand, so no strided view
    // can express it and the planner must store the expression first.
    const Dims shape{2, 3};
    const ViewGeometry child{0, {2, 3}, {1, 2}};
    const ViewGeometry outer{0, {6}, {1}};
    ViewGeometry out;
    CHECK(!compose_views(shape, outer, child, &out));
}

TEST(view_span_and_reshape_strides) {
    const ViewGeometry v{10, {3, 4}, {-4, 1}};
    const Span s = view_span(v, 0, 12);
    CHECK_EQ(s.lo, 2);
    CHECK_EQ(s.hi, 13);
    Dims strides;
    CHECK(reshape_strides({4, 6}, {6, 1}, {2, 2, 6}, &strides));
    CHECK_EQ(strides, (Dims{12, 6, 1}));
    CHECK(!reshape_strides({4, 6}, {1, 4}, {24}, &strides));  // a transpose needs a copy
}
