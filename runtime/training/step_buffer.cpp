// StepBuffer: a step tensor's memory and its ledger holding (step_buffer.hpp).
#include "runtime/training/step_buffer.hpp"

#include <utility>

namespace burst::rt {
namespace {

DType stored_dtype(StepKernels& kernels, Stored stored) {
  return stored == Stored::Activation ? kernels.activation_dtype() : DType::F32;
}

// A block that owns `values` (host memory, fp32): freeing it deletes the vector.
MemoryBlock adopt(std::vector<float>&& values) {
  auto* owned = new std::vector<float>(std::move(values));  // NOLINT: owned by the block's free function
  const MemoryFree free{[](std::byte*, void* context) { delete static_cast<std::vector<float>*>(context); }, owned};
  return {reinterpret_cast<std::byte*>(owned->data()), owned->size() * sizeof(float), free};  // NOLINT: fp32 storage
}

}  // namespace

StepBuffer::StepBuffer(StepKernels& kernels, MemoryLedger& ledger, MemoryUse use, std::size_t n, Stored stored)
    : stored_(stored) {
  const DType dtype = stored_dtype(kernels, stored);
  block_ = kernels.memory().allocate(n * dtype_size(dtype));
  tensor_ = {block_.data(), n, dtype};
  hold_ = hold_in(ledger, use);
}

StepBuffer::StepBuffer(StepKernels& kernels, MemoryLedger& ledger, MemoryUse use, std::vector<float>&& values,
                       Stored stored)
    : stored_(stored) {
  const DType dtype = stored_dtype(kernels, stored);
  const std::size_t n = values.size();
  if (n > 0 && kernels.memory().space() == MemorySpace::Host && dtype == DType::F32) {
    block_ = adopt(std::move(values));
  } else {
    block_ = kernels.memory().allocate(n * dtype_size(dtype));
    kernels.memory().store(values, dtype, block_.data());
  }
  tensor_ = {block_.data(), n, dtype};
  hold_ = hold_in(ledger, use);
}

MemoryLedger::Hold StepBuffer::hold_in(MemoryLedger& ledger, MemoryUse use) const {
  return ledger.hold(use, float_bytes(tensor_.count), ledger.device_bytes(tensor_.count, stored_));
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
