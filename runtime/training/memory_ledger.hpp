// The training runtime's own account of the memory a step holds, by use, so the savings of a
// checkpoint policy or of the fused LM head are measured rather than claimed.
//
// Every buffer whose size depends on those choices is registered while it lives: a Hold (RAII)
// adds its bytes to its use when made and takes them off when destroyed or released. Buffers
// that live only inside one call (a ring pass's in-flight blocks) are charged with transient():
// they count towards the peak on top of what is held at that moment, then vanish. The ledger
// keeps the peak of the total, the breakdown at that moment, and each use's own peak.
//
// Parameters, gradients and AdamW moments are here too, as what this rank really holds under
// the plan's ZeRO stage (zero_model.hpp): whole or a shard, plus a gathered unit's parameters
// and a unit's full-size gradients while they live. What is not here: allocator or library
// overheads (BLAS workspaces, MPI buffers): the ledger counts the tensors the algorithm needs,
// as the planner's memory model does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace burst::rt {

// The uses of the planner's memory breakdown: those a training step's choices change, and the
// model state the ZeRO stage divides.
enum class MemoryUse : std::uint8_t { Activations, AttentionStash, RingBuffers, LossWorkspace, Params, Gradients, Optimizer };
inline constexpr std::size_t kMemoryUseCount = 7;
// "activations", "attention_stash", "ring_buffers", "lm_head", "params", "gradients",
// "optimizer": the names of the plan's memory items.
[[nodiscard]] std::string_view to_string(MemoryUse use);

class MemoryLedger {
 public:
  using Breakdown = std::array<std::uint64_t, kMemoryUseCount>;

  // Bytes held until destroyed or release()d. Movable, not copyable; a default Hold holds nothing.
  class Hold {
   public:
    Hold() = default;
    Hold(MemoryLedger* ledger, MemoryUse use, std::uint64_t bytes) : ledger_(ledger), use_(use), bytes_(bytes) {}
    Hold(Hold&& other) noexcept { *this = std::move(other); }
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { release(); }
    void release();

   private:
    MemoryLedger* ledger_ = nullptr;
    MemoryUse use_ = MemoryUse::Activations;
    std::uint64_t bytes_ = 0;
  };

  [[nodiscard]] Hold hold(MemoryUse use, std::uint64_t bytes);
  // `bytes` of `use` held for an instant on top of the current holdings.
  void transient(MemoryUse use, std::uint64_t bytes);

  [[nodiscard]] std::uint64_t current() const;
  [[nodiscard]] std::uint64_t peak() const { return peak_; }
  [[nodiscard]] const Breakdown& at_peak() const { return at_peak_; }  // each use's bytes when the total peaked
  [[nodiscard]] std::uint64_t peak(MemoryUse use) const { return peak_by_use_[static_cast<std::size_t>(use)]; }
  // Forgets the peaks (not the holdings): the next step is measured from what is held now.
  void reset_peaks();

 private:
  void note_peak(const Breakdown& now);

  Breakdown held_{};
  Breakdown at_peak_{};
  Breakdown peak_by_use_{};
  std::uint64_t peak_ = 0;
};

// Bytes of n floats.
[[nodiscard]] constexpr std::uint64_t float_bytes(std::size_t n) { return static_cast<std::uint64_t>(n) * sizeof(float); }

// A float buffer whose bytes the ledger holds under one use for as long as it lives.
class TrackedBuffer {
 public:
  TrackedBuffer() = default;
  TrackedBuffer(MemoryLedger& ledger, MemoryUse use, std::size_t n)
      : data_(n, 0.0f), hold_(ledger.hold(use, float_bytes(n))) {}
  // Adopts `data` (e.g. a kernel's output tensor) without copying it.
  TrackedBuffer(MemoryLedger& ledger, MemoryUse use, std::vector<float>&& data)
      : data_(std::move(data)), hold_(ledger.hold(use, float_bytes(data_.size()))) {}

  [[nodiscard]] std::span<float> span() { return data_; }
  [[nodiscard]] std::span<const float> span() const { return data_; }
  [[nodiscard]] float* data() { return data_.data(); }
  [[nodiscard]] const float* data() const { return data_.data(); }
  [[nodiscard]] std::size_t size() const { return data_.size(); }
  [[nodiscard]] bool empty() const { return data_.empty(); }
  // The same bytes, now counted under `use` (a kept output becomes a stash).
  void charge_to(MemoryLedger& ledger, MemoryUse use) {
    hold_.release();
    hold_ = ledger.hold(use, float_bytes(data_.size()));
  }
  // Frees the memory and its bytes in the ledger.
  void clear() {
    data_ = {};
    hold_.release();
  }

 private:
  std::vector<float> data_;
  MemoryLedger::Hold hold_;
};

}  // namespace burst::rt
