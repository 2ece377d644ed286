#include "core/graph/recent_nodes.hpp"

#include <algorithm>

#include "core/graph/node.hpp"

namespace gpupy {

namespace {

int64_t g_min_elements = kRecentMinElements;

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

int64_t recent_min_elements() { return g_min_elements; }

int64_t set_recent_min_elements(int64_t n) {
    const int64_t previous = g_min_elements;
    g_min_elements = n < 1 ? 1 : n;
    return previous;
}

void mark_needed_together(const std::vector<Node*>& nodes) {
    static uint64_t next = 0;
    const uint64_t group = ++next;
    for (Node* n : nodes) {
        if (n->kind() == NodeKind::Expression && !n->complete()) n->together = group;
    }
}

}  // namespace gpupy
