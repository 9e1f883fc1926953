// The finish times of the flows in flight, earliest first, ties by task id (internal to
// FlowNetwork).
//
// Flows come in batches that end together: a ring step starts a transfer on every rank at
// once, all the same size at the same rate, so a 1024-GPU layer has 3 million flows but only
// about 3000 distinct finish times. A heap with one entry per flow pays a sift through a
// thousand entries for every one of them. Here flows are grouped by their exact finish time:
// a min-heap orders the groups (distinct times, so a handful), a flat hash finds a group by
// its time (the last one looked up is remembered), and each group keeps its members (task,
// slot) in a vector, sorted by task only when it comes to be popped (often already in order).
// Changing a finish time moves a flow between groups in O(1) plus, when a group appears or
// empties, a sift in the small heap; a flow alone in its group is re-keyed in place, so a
// component where every flow has its own finish time costs O(log F) per change, as a plain
// heap does.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "simulator/task_graph.hpp"

namespace burst::sim {

class FinishQueue {
 public:
  // Sets (or moves) the finish time of the flow in slot `slot` (>= 0), for `task`.
  void set(std::int32_t slot, TaskId task, double finish);
  // Forgets the flow in `slot`, if queued.
  void erase(std::int32_t slot);
  // The earliest finish time queued (infinity if none).
  [[nodiscard]] double min_finish() const {
    return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().finish;
  }
  // Removes the flow of the earliest (finish time, task) if it finishes at or before `now`,
  // and returns its slot; -1 if none does.
  std::int32_t pop(double now);

 private:
  struct Member {
    TaskId task;
    std::int32_t slot;
  };
  struct Group {
    double finish = 0;
    std::int32_t heap_pos = -1;
    std::size_t first = 0;  // members[first, end) are queued; the ones before were popped
    bool sorted = true;     // members[first, end) ascend by task
    std::vector<Member> members;
    [[nodiscard]] std::size_t size() const { return members.size() - first; }
  };
  struct Place {
    std::int32_t group = -1;
    std::int32_t index = 0;
  };
  struct HeapEntry {
    double finish;
    std::int32_t group;
  };
  // Finish time (bit pattern; finish times are never -0 or NaN) -> group: open addressing
  // with linear probing. Entries are never erased: one goes stale when its group leaves that
  // time (dropped, or re-keyed in place), which lookups see by checking the group, and stale
  // entries are left out when the table is rebuilt from the live groups as it fills up. So a
  // flow alone in its group changes time with one insertion.
  struct IndexSlot {
    std::uint64_t key;
    std::int32_t group;  // -1: empty
  };
  [[nodiscard]] std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (index_.size() - 1);
  }
  [[nodiscard]] std::int32_t find_group(std::uint64_t key) const;
  void index_group(std::uint64_t key, std::int32_t group);

  [[nodiscard]] std::int32_t new_group(double finish);
  void drop_group(std::int32_t group);
  void sort_members(Group& g);
  void heap_place(std::size_t at, const HeapEntry& entry);
  void heap_up(std::size_t at, HeapEntry entry);
  void heap_down(std::size_t at, HeapEntry entry);
  void heap_fix(std::size_t at);

  std::vector<Place> places_;  // per slot
  std::vector<Group> groups_;
  std::vector<std::int32_t> free_groups_;
  std::vector<HeapEntry> heap_;  // one per live group, 4-ary, by finish
  std::vector<IndexSlot> index_ = std::vector<IndexSlot>(64, IndexSlot{0, -1});
  std::size_t index_used_ = 0;  // entries, stale ones included
  // The last finish time looked up and its group (-1: none), kept in step with index_: the
  // flows of a batch get the same time one after the other.
  std::uint64_t last_key_ = ~std::uint64_t{0};  // a NaN pattern, never a finish time
  std::int32_t last_group_ = -1;
};

}  // namespace burst::sim
