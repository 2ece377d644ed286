// Running a plan (thesis 4.8): passes in order, each piece an eval_ir call.
//
// Every leaf's device blocks are acquired by one rule: the cached block if
// there is one, else uploaded from the host through the leaf's view (the
// node's storage blocks, a packed view, or a block an earlier pass staged
// and the cache evicted since). That rule needs only one invariant, which
// the block cache keeps: values a block held are on the host once the block
// is gone (eviction reads dirty blocks back). So a plan made against the
// cache as it was stays valid however much the passes evict.
//
// Device mode: each pass's blocks are pinned while it runs; a staged pass's
// result is cached (dirty) as its item's view block; the root pass's block
// is cached last. Host mode: the host engine reads every node's host buffer
// in place and writes results straight into the nodes' host buffers.
#pragma once

#include "core/memory/block_cache.hpp"
#include "core/planning/plan.hpp"
#include "core/runtime/driver_loader.hpp"

namespace gpupy {

void execute(BlockPlan& plan, Driver& driver, BlockCache& cache);

// The one upload path: block k of view `geom` of node x, from the host
// (gathered through the view unless it is the node's own storage), cached
// clean. InternalError if the host does not have those values.
CachedBlock* upload_block(Driver& driver, BlockCache& cache, Node* x, const ViewGeometry& geom, int64_t k);

}  // namespace gpupy
