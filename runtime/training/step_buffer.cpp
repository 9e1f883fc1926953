// StepBuffer: a step tensor's memory and its ledger holding (step_buffer.hpp).
#include "runtime/training/step_buffer.hpp"

#include <fmt/format.h>

namespace burst::rt {
namespace {

DType stored_dtype(StepKernels& kernels, Stored stored) {
  return stored == Stored::Activation ? kernels.activation_dtype() : DType::F32;
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

void throw_out_of_memory(const OutOfKernelMemory& e, const MemoryLedger& ledger, MemoryUse use) {
  const Column column = e.space() == MemorySpace::Device ? Column::Device : Column::Host;
  const std::optional<std::uint64_t> predicted = ledger.predicted(use);
  throw Error(Problem{
      fmt::format("{} memory, plan item {}", e.space() == MemorySpace::Device ? "device" : "host", to_string(use)),
      fmt::format("out of memory allocating {} for {} while this rank's step held {} ({} of it {})", mib(e.bytes()),
                  to_string(use), mib(ledger.current(column)), mib(ledger.current(use, column)), to_string(use)),
      "",
      predicted ? fmt::format("the plan predicts {} for {} on a rank; plan with the memory this device "
                              "really has free (burst plan --memory-budget) or over more ranks",
                              mib(*predicted), to_string(use))
                : "plan with the memory this device really has free (burst plan --memory-budget) or over more ranks"});
}

StepBuffer::StepBuffer(StepKernels& kernels, MemoryLedger& ledger, MemoryUse use, std::size_t n, Stored stored)
    : stored_(stored) {
  const DType dtype = stored_dtype(kernels, stored);
  block_ = allocating_for(ledger, use, [&] { return kernels.memory().allocate(n * dtype_size(dtype)); });
  tensor_ = {block_.data(), n, dtype, kernels.memory().space()};
  hold_ = hold_in(ledger, use);
}

MemoryLedger::Hold StepBuffer::hold_in(MemoryLedger& ledger, MemoryUse use) const {
  return ledger.hold_elements(use, tensor_.count, stored_);
}

void StepBuffer::charge_to(MemoryLedger& ledger, MemoryUse use) {
  hold_.release();
  hold_ = hold_in(ledger, use);
}

void StepBuffer::clear() {
  hold_.release();
  block_ = {};
  tensor_ = {};
}

}  // namespace burst::rt
