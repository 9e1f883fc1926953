// An allocator for the big arrays of million-task graphs and of the engines that read them.
//
// A 5M-task layer touches about half a gigabyte of fresh memory (tasks, dependencies, per-task
// engine state). With 4 KiB pages every 4 KiB costs a page fault, which made a third of the
// whole run, and the event loop's random accesses to per-task state miss the TLB. Allocations of 2 MiB
// and more are therefore mapped directly, 2 MiB-aligned, and advised to use transparent huge
// pages (Linux): one fault per 2 MiB, and 512 times fewer TLB entries. Smaller allocations,
// and every allocation elsewhere than Linux, go to std::allocator.
//
// A fault still costs the kernel zeroing the whole huge page. The planner builds and drops a
// graph per candidate, thousands of graphs of the same few sizes, and zeroing fresh mappings
// had become half of its time at 1024 GPUs. So a freed mapping is kept, per thread, for the next
// allocation it can hold (MappingCache: at most 16 mappings and 1 GiB a thread, the oldest
// unmapped first; a larger one unmaps its tail), already faulted in and not zeroed again.
//
// Elements constructed without arguments are default-initialised, not value-initialised: a
// BigVector<int>::resize(n) leaves the new ints indeterminate (no pass writing zeros over an
// array about to be overwritten). Use assign(n, value) where a value is meant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace burst::sim {

#if defined(__linux__)
namespace detail {

// This thread's freed huge-page mappings, kept for reuse (above); huge_page_allocator.cpp.
class MappingCache {
 public:
  MappingCache() = default;
  MappingCache(const MappingCache&) = delete;
  MappingCache& operator=(const MappingCache&) = delete;
  ~MappingCache();
  // A kept mapping of `bytes` (the smallest that holds them, its tail unmapped), now the
  // caller's, or nullptr.
  [[nodiscard]] void* take(std::size_t bytes) noexcept;
  // Keeps the mapping `p` of `bytes`, unmapping the oldest kept ones to stay within the limits
  // (a mapping over the byte limit is unmapped at once).
  void keep(void* p, std::size_t bytes) noexcept;
  [[nodiscard]] std::size_t kept_bytes() const noexcept { return bytes_; }

  static constexpr std::size_t kMaxMappings = 16;
  static constexpr std::size_t kMaxBytes = std::size_t{1024} << 20;

 private:
  struct Mapping {
    void* p = nullptr;
    std::size_t bytes = 0;
  };
  Mapping remove(std::size_t i) noexcept;  // the i-th kept mapping, no longer kept
  void drop_oldest() noexcept;
  Mapping kept_[kMaxMappings];  // oldest first
  std::size_t count_ = 0, bytes_ = 0;
};

// The calling thread's cache; nullptr once the thread's cache is destroyed (a static object
// freed after it at exit unmaps directly).
[[nodiscard]] MappingCache* mapping_cache() noexcept;

}  // namespace detail
#endif

template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  // Rebinding, as containers do: implicit, as the standard's allocator requirements ask.
  // NOLINTNEXTLINE(google-explicit-constructor): implicit, as allocators must be (above)
  HugePageAllocator(const HugePageAllocator<U>& /*other*/) noexcept {}

  [[nodiscard]] T* allocate(std::size_t n) {
#if defined(__linux__)
    if (n * sizeof(T) >= kHugePage) {
      const std::size_t bytes = mapped_bytes(n);
      detail::MappingCache* cache = detail::mapping_cache();
      if (void* kept = cache != nullptr ? cache->take(bytes) : nullptr) return static_cast<T*>(kept);
      return static_cast<T*>(map(bytes));
    }
#endif
    return std::allocator<T>().allocate(n);
  }

  void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__)
    if (n * sizeof(T) >= kHugePage) {
      if (detail::MappingCache* cache = detail::mapping_cache()) {
        cache->keep(p, mapped_bytes(n));
      } else {
        munmap(p, mapped_bytes(n));
      }
      return;
    }
#endif
    std::allocator<T>().deallocate(p, n);
  }

  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  friend bool operator==(const HugePageAllocator& /*a*/, const HugePageAllocator& /*b*/) { return true; }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  [[nodiscard]] static std::size_t mapped_bytes(std::size_t n) {
    return (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
  }

#if defined(__linux__)
  // Maps `bytes` (a multiple of kHugePage) at a kHugePage boundary: maps one huge page more
  // and unmaps the slack on both sides.
  [[nodiscard]] static void* map(std::size_t bytes) {
    const std::size_t mapped = bytes + kHugePage;
    void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    void* p = raw;
    std::size_t space = mapped;
    std::align(kHugePage, bytes, p, space);  // always fits: one huge page of slack
    const auto before = static_cast<std::size_t>(static_cast<char*>(p) - static_cast<char*>(raw));
    if (before > 0) munmap(raw, before);
    munmap(static_cast<char*>(p) + bytes, mapped - before - bytes);  // never empty
    madvise(p, bytes, MADV_HUGEPAGE);                                // advice only: without THP the mapping works as is
    return p;
  }
#endif
};

// A vector for per-task arrays.
template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace burst::sim
