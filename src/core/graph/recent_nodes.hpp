// The sizable expressions created most recently and still alive: where the
// planner looks for expressions to evaluate in the same pass as the one
// asked for (planning/siblings.hpp) -- the channels of an image built one
// after another, then read one after another. A node leaves the list when
// it dies or when newer ones push it out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpupy {

class Node;

// How many nodes the list keeps, and the least size worth a place in it by
// default (below it a second pass costs less than looking for partners).
constexpr size_t kRecentNodes = 16;
constexpr int64_t kRecentMinElements = int64_t{1} << 14;

// The least size now (tests lower it, so that small programs meet
// siblings); set returns the previous one.
int64_t recent_min_elements();
int64_t set_recent_min_elements(int64_t n);

void note_recent(Node* n);
void forget_recent(Node* n);
// Oldest first.
const std::vector<Node*>& recent_nodes();

// Marks expression nodes as results of one call, needed together
// (Node::together); the others are left alone.
void mark_needed_together(const std::vector<Node*>& nodes);

}  // namespace gpupy
