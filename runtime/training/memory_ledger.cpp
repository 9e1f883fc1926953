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

MemoryLedger::Hold& MemoryLedger::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    ledger_ = std::exchange(other.ledger_, nullptr);
    use_ = other.use_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryLedger::Hold::release() {
  if (ledger_ != nullptr) ledger_->held_[static_cast<std::size_t>(use_)] -= bytes_;
  ledger_ = nullptr;
  bytes_ = 0;
}

MemoryLedger::Hold MemoryLedger::hold(MemoryUse use, std::uint64_t bytes) {
  held_[static_cast<std::size_t>(use)] += bytes;
  note_peak(held_);
  return Hold(this, use, bytes);
}

void MemoryLedger::transient(MemoryUse use, std::uint64_t bytes) {
  Breakdown now = held_;
  now[static_cast<std::size_t>(use)] += bytes;
  note_peak(now);
}

std::uint64_t MemoryLedger::current() const {
  std::uint64_t total = 0;
  for (const auto b : held_) total += b;
  return total;
}

void MemoryLedger::reset_peaks() {
  peak_ = 0;
  at_peak_ = {};
  peak_by_use_ = {};
  note_peak(held_);
}

void MemoryLedger::note_peak(const Breakdown& now) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kMemoryUseCount; ++i) {
    total += now[i];
    peak_by_use_[i] = std::max(peak_by_use_[i], now[i]);
  }
  if (total > peak_) {
    peak_ = total;
    at_peak_ = now;
  }
}

}  // namespace burst::rt
