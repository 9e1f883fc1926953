// The training runtime's own account of the memory a step holds, by use, so the savings of a
// checkpoint policy or of the fused LM head are measured rather than claimed.
//
// Every buffer whose size depends on those choices is registered while it lives: a Hold (RAII)
// adds its bytes to its use when made and takes them off when destroyed or released. Buffers
// that live only inside one call (a ring pass's in-flight blocks) are charged with transient():
// they count towards the peak on top of what is held at that moment, then vanish. The ledger
// keeps the peak of the total, the breakdown at that moment, and each use's own peak.
//
// Two columns, one set of lifetimes. Host: the bytes this CPU run holds, fp32 everywhere.
// Device: the bytes the GPU training step holds for the same buffers at the same moments, as it
// stores them under the plan's precision: activations and their gradients in the activation
// dtype (bf16: 2 bytes), per-row statistics (lse, inverse RMS) in fp32, parameters and their
// gradients in the activation dtype with the fp32 master copy beside AdamW's m and v (12 bytes
// a parameter, in the optimizer item), the LM head's logits in fp32. So every CPU run also
// predicts, buffer by buffer, what the plan's GPUs will hold, and both stand beside the plan's
// items (zero_report.hpp).
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
#include <optional>
#include <string_view>
#include <utility>

namespace burst::rt {

// The uses of the planner's memory breakdown: those a training step's choices change, and the
// model state the ZeRO stage divides.
enum class MemoryUse : std::uint8_t {
  Activations,
  AttentionStash,
  RingBuffers,
  LossWorkspace,
  Params,
  Gradients,
  Optimizer
};
inline constexpr std::size_t kMemoryUseCount = 7;
// "activations", "attention_stash", "ring_buffers", "lm_head", "params", "gradients",
// "optimizer": the names of the plan's memory items.
[[nodiscard]] std::string_view to_string(MemoryUse use);
// The use of the plan's memory item of that name, if any (the inverse of to_string).
[[nodiscard]] std::optional<MemoryUse> memory_use_named(std::string_view item);

// Which column of the ledger (see the head comment).
enum class Column : std::uint8_t { Host, Device };
// How the GPU step stores a buffer this run holds in fp32.
enum class Stored : std::uint8_t { Activation, Fp32 };

// How the device column counts (from the plan: its precision and ZeRO offload).
struct DeviceLayout {
  std::size_t activation_bytes = 4;  // what a Stored::Activation element costs (4: fp32, 2: bf16)
  bool optimizer_on_host = false;    // offloaded: the optimizer holds no device memory (zero_model.hpp)
  // A GPU run whose plan offloads: parameters, gradients and AdamW live on the host, and the
  // device holds only the units the step has bound (train_step.hpp), which the step charges itself.
  bool model_state_on_host = false;
};

// Bytes of n floats.
[[nodiscard]] constexpr std::uint64_t float_bytes(std::size_t n) {
  return static_cast<std::uint64_t>(n) * sizeof(float);
}

class MemoryLedger {
 public:
  using Breakdown = std::array<std::uint64_t, kMemoryUseCount>;

  MemoryLedger() = default;
  explicit MemoryLedger(DeviceLayout device) : device_(device) {}
  [[nodiscard]] const DeviceLayout& device_layout() const { return device_; }
  // Device bytes of n elements of `use` stored as `stored` (0 for model state kept on the host).
  [[nodiscard]] std::uint64_t device_bytes(std::size_t n, Stored stored, MemoryUse use = MemoryUse::Activations) const {
    const bool model_state = use == MemoryUse::Params || use == MemoryUse::Gradients || use == MemoryUse::Optimizer;
    if (model_state && device_.model_state_on_host) return 0;
    return static_cast<std::uint64_t>(n) * (stored == Stored::Activation ? device_.activation_bytes : 4);
  }

  // Bytes held until destroyed or release()d. Movable, not copyable; a default Hold holds nothing.
  class Hold {
   public:
    Hold() = default;
    Hold(MemoryLedger* ledger, MemoryUse use, std::uint64_t host_bytes, std::uint64_t device_bytes)
        : ledger_(ledger), use_(use), bytes_{host_bytes, device_bytes} {}
    Hold(Hold&& other) noexcept { *this = std::move(other); }
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { release(); }
    void release();

   private:
    MemoryLedger* ledger_ = nullptr;
    MemoryUse use_ = MemoryUse::Activations;
    std::array<std::uint64_t, 2> bytes_{};  // host, device
  };

  // The same bytes in both columns (a buffer the GPU step stores as this run does).
  [[nodiscard]] Hold hold(MemoryUse use, std::uint64_t bytes) { return hold(use, bytes, bytes); }
  [[nodiscard]] Hold hold(MemoryUse use, std::uint64_t host_bytes, std::uint64_t device_bytes);
  // n elements of `use`: 4 bytes each in the host column (this run's fp32), device_bytes() in
  // the device column.
  [[nodiscard]] Hold hold_elements(MemoryUse use, std::size_t n, Stored stored) {
    return hold(use, float_bytes(n), device_bytes(n, stored, use));
  }
  // Bytes of `use` held for an instant on top of the current holdings.
  void transient(MemoryUse use, std::uint64_t bytes) { transient(use, bytes, bytes); }
  void transient(MemoryUse use, std::uint64_t host_bytes, std::uint64_t device_bytes);

  [[nodiscard]] std::uint64_t current(Column c = Column::Host) const;
  [[nodiscard]] std::uint64_t current(MemoryUse use, Column c) const {
    return column(c).held[static_cast<std::size_t>(use)];
  }
  [[nodiscard]] std::uint64_t peak(Column c = Column::Host) const { return column(c).peak; }
  // Each use's bytes when the column's total peaked.
  [[nodiscard]] const Breakdown& at_peak(Column c = Column::Host) const { return column(c).at_peak; }
  [[nodiscard]] std::uint64_t peak(MemoryUse use, Column c = Column::Host) const {
    return column(c).peak_by_use[static_cast<std::size_t>(use)];
  }
  // Forgets the peaks (not the holdings): the next step is measured from what is held now.
  void reset_peaks();

  // The plan's prediction of a use on one rank (its memory item of that name), for messages
  // such as an allocation that did not fit (step_buffer.hpp); null where the plan has none.
  void set_predicted(MemoryUse use, std::uint64_t bytes) { predicted_[static_cast<std::size_t>(use)] = bytes; }
  [[nodiscard]] std::optional<std::uint64_t> predicted(MemoryUse use) const {
    return predicted_[static_cast<std::size_t>(use)];
  }

 private:
  struct Tally {
    Breakdown held{};
    Breakdown at_peak{};
    Breakdown peak_by_use{};
    std::uint64_t peak = 0;
    void note_peak(const Breakdown& now);
  };
  [[nodiscard]] const Tally& column(Column c) const { return tallies_[static_cast<std::size_t>(c)]; }

  DeviceLayout device_{};
  std::array<Tally, 2> tallies_{};  // host, device
  std::array<std::optional<std::uint64_t>, kMemoryUseCount> predicted_{};
};

}  // namespace burst::rt
