#include "core/graph/recent_nodes.hpp"

#include <algorithm>

#include "core/graph/node.hpp"

namespace gpupy {

namespace {

std::vector<Node*>& list() {
    static auto* nodes = new std::vector<Node*>();  // leaked: nodes may die during static destruction
    return *nodes;
}

}  // namespace

void note_recent(Node* n) {
    std::vector<Node*>& l = list();
    if (n->in_recent) return;
    if (l.size() == kRecentNodes) {
        l.front()->in_recent = false;
        l.erase(l.begin());
    }
    l.push_back(n);
    n->in_recent = true;
}

void forget_recent(Node* n) {
    std::vector<Node*>& l = list();
    l.erase(std::remove(l.begin(), l.end(), n), l.end());
    n->in_recent = false;
}

const std::vector<Node*>& recent_nodes() { return list(); }

void mark_needed_together(const std::vector<Node*>& nodes) {
    static uint64_t next = 0;
    const uint64_t group = ++next;
    for (Node* n : nodes) {
        if (n->kind() == NodeKind::Expression && !n->complete()) n->together = group;
    }
}

}  // namespace gpupy
