// Device copies of an array's values kept through exports of its bytes.
//
// Handing an array's host bytes to another library (np.asarray(g): an
// export, HostBuffer::exported) lets it write them at any time, unseen. A
// device copy of those values may then be stale, so every export used to
// drop it: a loop that reads its result each step (Life drawn every frame)
// uploaded it again each step. Instead, an export of a node the device
// holds records a hash of its bytes. While any export lives, nothing uses
// the device copy: expressions built on the bytes read a snapshot of them
// (NodeFactory::unexported). Once the last export has ended, before the
// next evaluation or export, the bytes are hashed again: unchanged, the
// device copy is the node's value still; changed, it is dropped, as after
// any write through gpupy.
#pragma once

#include <memory>

#include "core/graph/host_buffer.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

// `node`'s bytes are about to be exported (complete on the host, children
// no longer needed: host_write_target). The node takes a new identity -- an
// expression hash-consed over its old values must not be found again once
// they may change -- and its device blocks, if it has any, follow it under
// the new one, watched.
void begin_export(Node* node);

// The last live export of `host` ended (an ndarray's end, at any point: a
// garbage collection inside an evaluation too). Only noted: the check runs
// at the next settle_ended_exports.
void export_ended(const std::shared_ptr<HostBuffer>& host);

// Checks the bytes whose exports ended since the last call: a node whose
// bytes changed loses its device blocks and takes a new identity; their
// last snapshot (NodeFactory) is no longer kept for reuse. Runs
// where no evaluation holds blocks: before the outermost evaluation, and
// before an export or a write begins.
void settle_ended_exports();

}  // namespace gpupy
