#include "core/building/export_watch.hpp"

#include <vector>

#include "core/graph/node_factory.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

std::vector<std::weak_ptr<HostBuffer>>& ended() {
    static auto* v = new std::vector<std::weak_ptr<HostBuffer>>();
    return *v;
}

}  // namespace

void begin_export(Node* node) {
    settle_ended_exports();
    NodeFactory::renew_identity(node);
    if (node->cached_blocks == 0) return;  // nothing on the device to keep
    HostBuffer* host = node->host().get();
    BlockCache& cache = Runtime::get().cache();
    if (host->exported() && !host->watched()) {
        // Bytes another library may have written already, unwatched: the
        // device copy cannot be vouched for.
        cache.invalidate(node);
        return;
    }
    cache.rekey(node);
    // A further export while one lives keeps the first one's hash (the
    // bytes may have changed through it already).
    if (!host->watched()) host->watch(content_hash(host->data(), host->nbytes()));
}

void export_ended(const std::shared_ptr<HostBuffer>& host) { ended().push_back(host); }

void settle_ended_exports() {
    auto& list = ended();
    if (list.empty()) return;
    std::vector<std::weak_ptr<HostBuffer>> now;
    now.swap(list);
    BlockCache& cache = Runtime::get().cache();
    for (const auto& weak : now) {
        std::shared_ptr<HostBuffer> host = weak.lock();
        // Exported again meanwhile: that export's end checks it.
        if (!host || host->exported()) continue;
        NodeFactory::forget_snapshot_of(host.get());
        if (!host->watched()) continue;
        host->unwatch();
        if (content_hash(host->data(), host->nbytes()) == host->watched_hash()) {
            ++stats().exports_kept_device_copies;
            continue;
        }
        for (Node* n : cache.nodes_over(host.get())) {
            cache.invalidate(n);
            NodeFactory::renew_identity(n);
        }
    }
}

}  // namespace gpupy
