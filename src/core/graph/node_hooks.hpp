// Callbacks from the node graph to the layers above it, so node.cpp does
// not depend on the block cache.
#pragma once

namespace gpupy {

class Node;

struct NodeHooks {
    // A node that still had device blocks cached is being destroyed.
    void (*on_destroy)(Node* node) = [](Node*) {};
    // `copy` was made a snapshot of the exported node `from`'s bytes, which
    // the device copy of `from` still holds (export_watch.hpp): the copy
    // may take those blocks.
    void (*on_snapshot)(Node* from, Node* copy) = [](Node*, Node*) {};
};

NodeHooks& node_hooks();

}  // namespace gpupy
