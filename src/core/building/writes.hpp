// Writes (the thesis lacked them): a[...] = v, in-place operators, out=.
//
// Replacing every element of an array makes its Owner point at a new lazy
// node; expressions built from the old value keep it (copy-on-write,
// lazily). A partial write is done on the host, now: if anything else still
// refers to the old node (an unevaluated expression, another array sharing
// the value) the node is copied first; otherwise the write is destructive
// and the node's cached device blocks and hash-consing entry are dropped
// (thesis 2.6).
#pragma once

#include "core/graph/array.hpp"

namespace gpupy {

// target[...] = value with NumPy's broadcasting (leading length-1
// dimensions of the value dropped) and an unsafe cast to target's dtype.
// ValueError with NumPy's message if the shapes do not broadcast or the
// target is read-only. Takes the value's reference: once its elements are
// read, a value that is a view of the target itself (`A[i] = A[j]`) no
// longer counts as a user of the old values, so the write stays in place.
void assign(const GpuArray& target, NodeView value);

// The node to write a part of `target` into in host memory, now: its
// values evaluated to the host, copied first if anything else still needs
// the old ones (copy-on-write, stats().write_copies), else its cached
// device blocks and hash-consing entry dropped (a destructive update).
Node* host_write_target(const GpuArray& target);

// The node whose host bytes an export of `target` hands out: evaluated
// there, copied first where something else needs the old values, its
// device blocks kept and watched (export_watch.hpp).
Node* export_target(const GpuArray& target);

// The array's node if its values may be overwritten in host memory right
// now: all of them on the host (nothing newer on the device), and nothing
// else refers to the node (no lazy expression, no other array needs the
// old values). nullptr otherwise (then assign() is the way). The caller
// writes and calls forget_old_values.
Node* writable_in_place(const GpuArray& target);

// target[...] = one value (`a[10:20] = 2.5` in a loop): every element of
// the view set to `element` (of the target's dtype) in host memory, now,
// where the target may be written in place (writable_in_place); false,
// nothing done, otherwise (then assign() is the way). NumPy's fill, without
// the constant node, its broadcast view and the gather assign() costs.
bool fill_in_place(const GpuArray& target, gpupy_scalar element);
// For a write into the node's host memory: its cached device blocks, its
// hash-consing entry and its children describe the old values.
void forget_old_values(Node* node);

}  // namespace gpupy
