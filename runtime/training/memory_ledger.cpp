// The ledger's bookkeeping (see memory_ledger.hpp).
#include "runtime/training/memory_ledger.hpp"

#include <algorithm>
#include <utility>

namespace burst::rt {

std::string_view to_string(MemoryUse use) {
  switch (use) {
    case MemoryUse::Activations: return "activations";
    case MemoryUse::AttentionStash: return "attention_stash";
    case MemoryUse::RingBuffers: return "ring_buffers";
    case MemoryUse::LossWorkspace: return "lm_head";
    case MemoryUse::Params: return "params";
    case MemoryUse::Gradients: return "gradients";
    case MemoryUse::Optimizer: return "optimizer";
  }
  return "?";
}

std::optional<MemoryUse> memory_use_named(std::string_view item) {
  for (std::size_t u = 0; u < kMemoryUseCount; ++u) {
    if (to_string(static_cast<MemoryUse>(u)) == item) return static_cast<MemoryUse>(u);
  }
  return std::nullopt;
}

MemoryLedger::Hold& MemoryLedger::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    ledger_ = std::exchange(other.ledger_, nullptr);
    use_ = other.use_;
    bytes_ = std::exchange(other.bytes_, {});
  }
  return *this;
}

void MemoryLedger::Hold::release() {
  if (ledger_ != nullptr) {
    for (std::size_t c = 0; c < 2; ++c) ledger_->tallies_[c].held[static_cast<std::size_t>(use_)] -= bytes_[c];
  }
  ledger_ = nullptr;
  bytes_ = {};
}

MemoryLedger::Hold MemoryLedger::hold(MemoryUse use, std::uint64_t host_bytes, std::uint64_t device_bytes) {
  const std::array<std::uint64_t, 2> bytes{host_bytes, device_bytes};
  for (std::size_t c = 0; c < 2; ++c) {
    tallies_[c].held[static_cast<std::size_t>(use)] += bytes[c];
    tallies_[c].note_peak(tallies_[c].held);
  }
  return Hold(this, use, host_bytes, device_bytes);
}

void MemoryLedger::transient(MemoryUse use, std::uint64_t host_bytes, std::uint64_t device_bytes) {
  const std::array<std::uint64_t, 2> bytes{host_bytes, device_bytes};
  for (std::size_t c = 0; c < 2; ++c) {
    Breakdown now = tallies_[c].held;
    now[static_cast<std::size_t>(use)] += bytes[c];
    tallies_[c].note_peak(now);
  }
}

std::uint64_t MemoryLedger::current(Column c) const {
  std::uint64_t total = 0;
  for (const auto b : column(c).held) total += b;
  return total;
}

void MemoryLedger::reset_peaks() {
  for (Tally& t : tallies_) {
    t.peak = 0;
    t.at_peak = {};
    t.peak_by_use = {};
    t.note_peak(t.held);
  }
}

void MemoryLedger::Tally::note_peak(const Breakdown& now) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kMemoryUseCount; ++i) {
    total += now[i];
    peak_by_use[i] = std::max(peak_by_use[i], now[i]);
  }
  if (total > peak) {
    peak = total;
    at_peak = now;
  }
}

}  // namespace burst::rt
