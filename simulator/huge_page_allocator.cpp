// The per-thread cache of freed huge-page mappings (see huge_page_allocator.hpp).
#include "simulator/huge_page_allocator.hpp"

#if defined(__linux__)
namespace burst::sim::detail {
namespace {

thread_local bool cache_destroyed = false;  // trivially destructible: readable to the thread's end

}  // namespace

MappingCache::~MappingCache() {
  while (count_ > 0) drop_oldest();
  cache_destroyed = true;
}

void* MappingCache::take(std::size_t bytes) noexcept {
  // The smallest kept mapping that holds `bytes`, the most recently kept among equals (its
  // pages the likeliest still cached); a larger one gives back its tail (whole huge pages), so
  // the caller frees exactly what it asked for.
  std::size_t best = count_;
  for (std::size_t i = count_; i-- > 0;) {
    if (kept_[i].bytes >= bytes && (best == count_ || kept_[i].bytes < kept_[best].bytes)) best = i;
  }
  if (best == count_) return nullptr;
  const Mapping m = remove(best);
  if (m.bytes > bytes) munmap(static_cast<char*>(m.p) + bytes, m.bytes - bytes);
  return m.p;
}

void MappingCache::keep(void* p, std::size_t bytes) noexcept {
  if (bytes > kMaxBytes) {
    munmap(p, bytes);
    return;
  }
  while (count_ == kMaxMappings || bytes_ + bytes > kMaxBytes) drop_oldest();
  kept_[count_++] = {p, bytes};
  bytes_ += bytes;
}

MappingCache::Mapping MappingCache::remove(std::size_t i) noexcept {
  const Mapping m = kept_[i];
  for (std::size_t j = i + 1; j < count_; ++j) kept_[j - 1] = kept_[j];
  --count_;
  bytes_ -= m.bytes;
  return m;
}

void MappingCache::drop_oldest() noexcept {
  const Mapping m = remove(0);
  munmap(m.p, m.bytes);
}

MappingCache* mapping_cache() noexcept {
  if (cache_destroyed) return nullptr;
  thread_local MappingCache cache;
  return &cache;
}

}  // namespace burst::sim::detail
#endif
