#include "core/graph/node_table.hpp"

#include <functional>
#include <utility>

#include "core/graph/node.hpp"

namespace gpupy {

uint64_t NodeTable::hash_of(std::string_view key) { return std::hash<std::string_view>{}(key); }

Node* NodeTable::find(std::string_view key, uint64_t hash) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(hash);; i = (i + 1) & (slots_.size() - 1)) {
        const Slot& s = slots_[i];
        if (!s.node) return nullptr;
        if (s.hash == hash && s.node->hash_key() == key) return s.node;
    }
}

bool NodeTable::insert(Node* n, uint64_t hash) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const std::string_view key = n->hash_key();
    size_t i = home(hash);
    for (; slots_[i].node; i = (i + 1) & (slots_.size() - 1)) {
        if (slots_[i].hash == hash && slots_[i].node->hash_key() == key) return false;
    }
    slots_[i] = Slot{hash, n};
    ++size_;
    return true;
}

void NodeTable::erase(const Node* n, uint64_t hash) {
    if (slots_.empty()) return;
    const size_t mask = slots_.size() - 1;
    size_t i = home(hash);
    for (; slots_[i].node != n; i = (i + 1) & mask) {
        if (!slots_[i].node) return;  // not in the table
    }
    // Backward-shift deletion: an entry after the hole moves into it when
    // its home lies at or before the hole (cyclically), so that every probe
    // sequence stays unbroken without tombstones.
    for (size_t j = (i + 1) & mask; slots_[j].node; j = (j + 1) & mask) {
        const size_t h = home(slots_[j].hash);
        const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (stays) continue;
        slots_[i] = slots_[j];
        i = j;
    }
    slots_[i] = Slot{};
    --size_;
}

void NodeTable::grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    for (const Slot& s : old) {
        if (!s.node) continue;
        size_t i = home(s.hash);
        while (slots_[i].node) i = (i + 1) & (slots_.size() - 1);
        slots_[i] = s;
    }
}

}  // namespace gpupy
