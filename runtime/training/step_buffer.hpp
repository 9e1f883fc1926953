// A tensor of the training step in its kernels' memory (step_kernels.hpp) whose bytes the
// MemoryLedger holds under one use for as long as it lives: 4 bytes an element in the host
// column (what the CPU step stores), what the GPU step stores in the device column (its
// activation dtype, or fp32 for statistics). The GPU step's own buffers are exactly those
// device bytes, so there the ledger's device column is a measurement, not a prediction.
//
// An allocation that does not fit (OutOfKernelMemory: the GPU out of memory) becomes an error
// naming the plan's memory item the buffer was for, what the rank's step held then, and the
// plan's prediction of that item: allocating_for() does it for any allocation of the step.
#pragma once

#include <cstddef>

#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

// Runs `allocate` (whatever allocates kernel memory for `use`), turning OutOfKernelMemory into
// that error.
[[noreturn]] void throw_out_of_memory(const OutOfKernelMemory& e, const MemoryLedger& ledger, MemoryUse use);
template <typename Allocate>
auto allocating_for(const MemoryLedger& ledger, MemoryUse use, Allocate&& allocate) -> decltype(allocate()) {
  try {
    return allocate();
  } catch (const OutOfKernelMemory& e) {
    throw_out_of_memory(e, ledger, use);
  }
}

class StepBuffer {
 public:
  StepBuffer() = default;
  // n elements stored as `stored` says: the kernels' activation dtype or fp32. Contents unspecified.
  StepBuffer(StepKernels& kernels, MemoryLedger& ledger, MemoryUse use, std::size_t n,
             Stored stored = Stored::Activation);

  [[nodiscard]] const StepTensor& tensor() const { return tensor_; }
  [[nodiscard]] std::size_t size() const { return tensor_.count; }
  [[nodiscard]] bool empty() const { return tensor_.count == 0; }
  // The same bytes, now counted under `use` (a kept output becomes a stash).
  void charge_to(MemoryLedger& ledger, MemoryUse use);
  // Frees the memory and its bytes in the ledger.
  void clear();

 private:
  [[nodiscard]] MemoryLedger::Hold hold_in(MemoryLedger& ledger, MemoryUse use) const;

  MemoryBlock block_;
  StepTensor tensor_;
  Stored stored_ = Stored::Activation;
  MemoryLedger::Hold hold_;
};

}  // namespace burst::rt
