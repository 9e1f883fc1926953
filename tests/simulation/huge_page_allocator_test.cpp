// The huge-page allocator's cache of freed mappings: reuse, the tail given back, the limits.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include "simulator/huge_page_allocator.hpp"

using namespace burst::sim;

#if defined(__linux__)
namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

void* map_huge(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return p;
}

}  // namespace

TEST_CASE("a freed big vector's mapping serves the next one of its size, or a smaller one", "[huge_pages]") {
  // On a thread of its own: its cache starts empty whatever the other tests left in theirs.
  const std::size_t n = 3 * kHuge / sizeof(std::int64_t);  // 6 MiB: mapped, not from malloc
  struct Seen {
    bool reused = false, reused_by_smaller = false;
    std::size_t kept_after_free = 0, kept_after_reuse = 0, kept_after_smaller = 0, kept_after_small = 0;
  } seen;
  std::thread([&] {
    detail::MappingCache* cache = detail::mapping_cache();
    const std::int64_t* first = nullptr;
    {
      BigVector<std::int64_t> v(n);
      first = v.data();
      v.back() = 42;
    }
    seen.kept_after_free = cache->kept_bytes();
    {
      BigVector<std::int64_t> again(n);
      seen.reused = again.data() == first;  // no fresh mapping: nothing to fault in and zero again
      seen.kept_after_reuse = cache->kept_bytes();
    }
    {
      // A smaller vector takes the same mapping; the tail beyond its 2 MiB is unmapped.
      BigVector<std::int64_t> smaller(n / 3);
      seen.reused_by_smaller = smaller.data() == first;
    }
    seen.kept_after_smaller = cache->kept_bytes();
    { BigVector<char> small(1024); }  // below 2 MiB: the standard allocator, not the cache
    seen.kept_after_small = cache->kept_bytes();
  }).join();
  CHECK(seen.kept_after_free == 3 * kHuge);
  CHECK(seen.reused);
  CHECK(seen.kept_after_reuse == 0);
  CHECK(seen.reused_by_smaller);
  CHECK(seen.kept_after_smaller == kHuge);  // it came back as 2 MiB
  CHECK(seen.kept_after_small == kHuge);
}

TEST_CASE("the mapping cache keeps at most its mappings and bytes, the oldest unmapped first", "[huge_pages]") {
  detail::MappingCache cache;
  CHECK(cache.take(kHuge) == nullptr);
  std::vector<void*> kept;
  for (std::size_t i = 0; i < detail::MappingCache::kMaxMappings + 4; ++i) {
    void* p = map_huge(kHuge);
    kept.push_back(p);
    cache.keep(p, kHuge);
    CHECK(cache.kept_bytes() <= detail::MappingCache::kMaxMappings * kHuge);
  }
  CHECK(cache.kept_bytes() == detail::MappingCache::kMaxMappings * kHuge);
  // The newest are kept (the oldest were unmapped: their addresses may be mapped again since, so
  // only the newest is compared): the last one kept is among those handed out.
  bool newest_found = false;
  for (std::size_t i = 0; i < detail::MappingCache::kMaxMappings; ++i) {
    void* p = cache.take(kHuge);
    REQUIRE(p != nullptr);
    newest_found = newest_found || p == kept.back();
    munmap(p, kHuge);
  }
  CHECK(newest_found);
  CHECK(cache.take(kHuge) == nullptr);
  CHECK(cache.kept_bytes() == 0);
  // A mapping larger than the whole budget is unmapped, not kept.
  const std::size_t too_big = detail::MappingCache::kMaxBytes + kHuge;
  cache.keep(map_huge(too_big), too_big);
  CHECK(cache.kept_bytes() == 0);
  // Over the byte budget the oldest go until the new one fits.
  const std::size_t half = detail::MappingCache::kMaxBytes / 2;
  cache.keep(map_huge(half), half);
  cache.keep(map_huge(half), half);
  cache.keep(map_huge(kHuge), kHuge);
  CHECK(cache.kept_bytes() == half + kHuge);
}
#endif
