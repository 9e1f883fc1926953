// A monotone priority queue for event times (a radix heap).
//
// A discrete-event simulation never schedules into the past, so the queue only ever needs
// keys >= the last minimum it handed out. A radix heap exploits that: a non-negative double's
// bit pattern, read as an unsigned integer, sorts like the double, and an item is kept in the
// bucket numbered by the highest bit where its key differs from the last minimum. Bucket 0
// holds the items equal to the last minimum. Popping empties bucket 0 first; when it is empty,
// the lowest non-empty bucket is scanned for its minimum, which becomes the new reference,
// and its items are redistributed into lower buckets. Every item moves down at most 64 times,
// usually once or twice, and a push is O(1). Against a binary heap this removes the
// unpredictable sift-down branches that dominated the event loop, and events at one instant
// (a synchronous ring step) land in one bucket and come out in O(1) each.
//
// Items with equal keys come out in no particular (but deterministic) order.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace burst::sim {

template <class Item>
class RadixQueue {
 public:
  // time >= the last time top_time() returned (and >= 0).
  void push(double time, const Item& item) {
    const std::uint64_t key = std::bit_cast<std::uint64_t>(time);
    buckets_[bucket_of(key)].push_back({key, item});
    ++size_;
  }

  [[nodiscard]] bool empty() const { return size_ == 0; }

  // The smallest time queued; the queue must not be empty.
  [[nodiscard]] double top_time() {
    settle();
    return std::bit_cast<double>(last_);
  }

  // Whether more items share the time of the last pop. Unlike top_time(), it does not move
  // on to the next time, so pushes at the current time stay legal.
  [[nodiscard]] bool more_now() const { return !buckets_[0].empty(); }

  // Removes and returns an item of the smallest time.
  Item pop() {
    settle();
    Item item = buckets_[0].back().item;
    buckets_[0].pop_back();
    --size_;
    return item;
  }

 private:
  struct Entry {
    std::uint64_t key;
    Item item;
  };

  [[nodiscard]] std::size_t bucket_of(std::uint64_t key) const {
    return key == last_ ? 0 : static_cast<std::size_t>(64 - std::countl_zero(key ^ last_));
  }

  // Makes bucket 0 non-empty: moves the minimum of the lowest non-empty bucket there.
  void settle() {
    if (!buckets_[0].empty()) return;
    std::size_t b = 1;
    while (buckets_[b].empty()) ++b;
    std::uint64_t min = buckets_[b].front().key;
    for (const Entry& e : buckets_[b]) min = e.key < min ? e.key : min;
    last_ = min;
    for (const Entry& e : buckets_[b]) buckets_[bucket_of(e.key)].push_back(e);
    buckets_[b].clear();
  }

  std::array<std::vector<Entry>, 65> buckets_;
  std::uint64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace burst::sim
