#include "simulator/detail/engine/finish_queue.hpp"

#include <algorithm>
#include <bit>

namespace burst::sim {

std::int32_t FinishQueue::find_group(std::uint64_t key) const {
  const std::size_t mask = index_.size() - 1;
  for (std::size_t i = home(key); index_[i].group >= 0; i = (i + 1) & mask) {
    if (index_[i].key != key) continue;
    const Group& g = groups_[static_cast<std::size_t>(index_[i].group)];
    if (g.heap_pos >= 0 && std::bit_cast<std::uint64_t>(g.finish) == key) return index_[i].group;
  }
  return -1;
}

// `group` must be live (in the heap) already: a rebuild keeps the live groups only.
void FinishQueue::index_group(std::uint64_t key, std::int32_t group) {
  if ((index_used_ + 1) * 2 > index_.size()) {
    std::size_t size = 64;
    while (size < 4 * heap_.size()) size *= 2;
    index_.assign(size, IndexSlot{0, -1});
    index_used_ = 0;
    for (const HeapEntry& e : heap_) {
      if (e.group != group) index_group(std::bit_cast<std::uint64_t>(e.finish), e.group);
    }
  }
  const std::size_t mask = index_.size() - 1;
  std::size_t i = home(key);
  while (index_[i].group >= 0) i = (i + 1) & mask;
  index_[i] = {key, group};
  ++index_used_;
}

void FinishQueue::set(std::int32_t slot, TaskId task, double finish) {
  const auto s = static_cast<std::size_t>(slot);
  if (s >= places_.size()) places_.resize(s + 1);
  const auto key = std::bit_cast<std::uint64_t>(finish);
  if (key != last_key_) {
    last_key_ = key;
    last_group_ = find_group(key);
  }
  const std::int32_t target = last_group_;
  const std::int32_t current = places_[s].group;
  if (current >= 0) {
    if (current == target) return;
    Group& g = groups_[static_cast<std::size_t>(current)];
    if (target < 0 && g.size() == 1) {  // alone: the group takes the new time
      g.finish = finish;
      heap_[static_cast<std::size_t>(g.heap_pos)].finish = finish;
      heap_fix(static_cast<std::size_t>(g.heap_pos));
      index_group(key, current);
      last_group_ = current;
      return;
    }
    erase(slot);
  }
  if (target < 0) last_group_ = new_group(finish);
  const std::int32_t group = last_group_;
  Group& g = groups_[static_cast<std::size_t>(group)];
  if (g.sorted && g.size() > 0 && g.members.back().task > task) g.sorted = false;
  places_[s] = {group, static_cast<std::int32_t>(g.members.size())};
  g.members.push_back({task, slot});
}

void FinishQueue::erase(std::int32_t slot) {
  const auto s = static_cast<std::size_t>(slot);
  if (s >= places_.size() || places_[s].group < 0) return;
  const Place place = places_[s];
  places_[s].group = -1;
  Group& g = groups_[static_cast<std::size_t>(place.group)];
  const auto at = static_cast<std::size_t>(place.index);
  if (at + 1 != g.members.size()) {
    const Member last = g.members.back();
    g.members[at] = last;
    places_[static_cast<std::size_t>(last.slot)].index = place.index;
    g.sorted = false;
  }
  g.members.pop_back();
  if (g.size() == 0) drop_group(place.group);
}

std::int32_t FinishQueue::pop(double now) {
  if (heap_.empty() || heap_.front().finish > now) return -1;
  const std::int32_t group = heap_.front().group;
  Group& g = groups_[static_cast<std::size_t>(group)];
  if (!g.sorted) sort_members(g);
  const Member m = g.members[g.first++];
  places_[static_cast<std::size_t>(m.slot)].group = -1;
  if (g.size() == 0) drop_group(group);
  return m.slot;
}

void FinishQueue::sort_members(Group& g) {
  const auto begin = g.members.begin() + static_cast<std::ptrdiff_t>(g.first);
  const auto end = g.members.end();
  const auto descending = [](const Member& a, const Member& b) { return a.task > b.task; };
  if (std::is_sorted(begin, end, descending)) {
    std::reverse(begin, end);
  } else {
    std::sort(begin, end, [](const Member& a, const Member& b) { return a.task < b.task; });
  }
  for (std::size_t i = g.first; i < g.members.size(); ++i) {
    places_[static_cast<std::size_t>(g.members[i].slot)].index = static_cast<std::int32_t>(i);
  }
  g.sorted = true;
}

std::int32_t FinishQueue::new_group(double finish) {
  std::int32_t id;
  if (!free_groups_.empty()) {
    id = free_groups_.back();
    free_groups_.pop_back();
  } else {
    id = static_cast<std::int32_t>(groups_.size());
    groups_.emplace_back();
  }
  Group& g = groups_[static_cast<std::size_t>(id)];
  g.finish = finish;
  g.first = 0;
  g.sorted = true;
  g.members.clear();
  heap_.push_back({finish, id});
  heap_up(heap_.size() - 1, heap_.back());
  index_group(std::bit_cast<std::uint64_t>(finish), id);
  return id;
}

void FinishQueue::drop_group(std::int32_t group) {
  if (group == last_group_) last_group_ = -1;
  Group& g = groups_[static_cast<std::size_t>(group)];
  const auto at = static_cast<std::size_t>(g.heap_pos);
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (at < heap_.size()) {
    heap_place(at, last);
    heap_fix(at);
  }
  g.heap_pos = -1;
  g.members.clear();
  g.first = 0;
  free_groups_.push_back(group);
}

void FinishQueue::heap_place(std::size_t at, const HeapEntry& entry) {
  heap_[at] = entry;
  groups_[static_cast<std::size_t>(entry.group)].heap_pos = static_cast<std::int32_t>(at);
}

void FinishQueue::heap_up(std::size_t at, HeapEntry entry) {
  while (at > 0) {
    const std::size_t parent = (at - 1) / 4;
    if (!(entry.finish < heap_[parent].finish)) break;
    heap_place(at, heap_[parent]);
    at = parent;
  }
  heap_place(at, entry);
}

void FinishQueue::heap_down(std::size_t at, HeapEntry entry) {
  const std::size_t n = heap_.size();
  while (true) {
    const std::size_t first = 4 * at + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (heap_[c].finish < heap_[best].finish) best = c;
    }
    if (!(heap_[best].finish < entry.finish)) break;
    heap_place(at, heap_[best]);
    at = best;
  }
  heap_place(at, entry);
}

void FinishQueue::heap_fix(std::size_t at) {
  const HeapEntry entry = heap_[at];
  if (at > 0 && entry.finish < heap_[(at - 1) / 4].finish) {
    heap_up(at, entry);
  } else {
    heap_down(at, entry);
  }
}

}  // namespace burst::sim
