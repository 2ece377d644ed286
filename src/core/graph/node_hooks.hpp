// Callbacks from the node graph to the layers above it, so node.cpp does
// not depend on the block cache.
#pragma once

namespace gpupy {

class Node;

struct NodeHooks {
    // A node that still had device blocks cached is being destroyed.
    void (*on_destroy)(Node* node) = [](Node*) {};
};

NodeHooks& node_hooks();

}  // namespace gpupy
