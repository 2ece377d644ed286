// The hash-consing table (NodeFactory): every live hashed node by its key.
//
// Open addressing with linear probing over (hash, node) slots kept in one
// array: a lookup reads a slot or two and compares a key only where the
// full hashes are equal. std::unordered_map chained a heap entry per node
// and was a third of the cost of building a node in a loop (`x - v` for
// many v) once thousands were alive: each lookup, insert and erase chased
// the bucket, the entry and the key through memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpupy {

class Node;

class NodeTable {
public:
    static uint64_t hash_of(std::string_view key);

    // The node with this key (and hash), or null.
    Node* find(std::string_view key, uint64_t hash) const;
    // Adds n under its key, unless a node with an equal key is there
    // already (then the table is unchanged and this returns false).
    bool insert(Node* n, uint64_t hash);
    // Removes n itself, if it is in the table (a node with an equal key
    // that is not n stays).
    void erase(const Node* n, uint64_t hash);
    size_t size() const { return size_; }

private:
    struct Slot {
        uint64_t hash = 0;
        Node* node = nullptr;  // null: empty
    };
    size_t home(uint64_t hash) const { return static_cast<size_t>(hash) & (slots_.size() - 1); }
    void grow();

    std::vector<Slot> slots_;  // a power of two of them, at most half used
    size_t size_ = 0;
};

}  // namespace gpupy
