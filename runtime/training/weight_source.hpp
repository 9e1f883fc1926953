// Where a training step reads its parameters and leaves its gradients: one unit at a time (the
// embedding, each layer, the head; ModelLayout::units), so the step is one piece of code whatever
// a rank holds between steps.
//
//   acquire(u) ... release(u)                 u's parameters, valid in between
//   gradients(u) ... gradients_done(u)        a zeroed buffer u's backward accumulates into
//
// The step acquires each unit before its forward and again before its backward (and recompute),
// releasing it after each, and names the unit it acquires next (prefetch); it asks for a unit's gradients when that
// unit's backward starts and says when it is done. A whole replica (WholeModel below, and ZeRO stages 0-2) hands out
// slices of the vector it keeps; ZeRO stage 3 all-gathers a unit's parameters on acquire and frees them on release;
// stages 2-3 reduce-scatter a unit's gradients on gradients_done and free the full-size buffer (zero_model.hpp).
// Tensors count from the unit's first element: Slice::relative_to(unit.offset) finds a tensor in them. They are where
// the model state lives: host fp32 (WholeModel, and ZeroModel on the CPU or offloaded), or the step's device memory
// (ZeroModel with the state on the GPU: the parameters in the activation dtype, gradients fp32).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "runtime/training/model.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

class WeightSource {
 public:
  WeightSource() = default;
  WeightSource(const WeightSource&) = delete;
  WeightSource& operator=(const WeightSource&) = delete;
  virtual ~WeightSource() = default;

  [[nodiscard]] virtual StepTensor acquire(std::size_t unit) = 0;
  virtual void release(std::size_t unit) = 0;
  [[nodiscard]] virtual StepTensor gradients(std::size_t unit) = 0;
  virtual void gradients_done(std::size_t unit) = 0;
  // The unit the step acquires next: a source that gathers its parameters may start now, so
  // the gather overlaps the step's compute until then (ZeRO 3 with the plan's overlap).
  virtual void prefetch(std::size_t /*unit*/) {}
};

// Zeroes unit u's slice of a whole gradient vector and returns it.
[[nodiscard]] inline std::span<float> zeroed(std::span<float> grads, const Slice& unit) {
  const std::span<float> out = unit.of(grads);
  std::fill(out.begin(), out.end(), 0.0f);
  return out;
}

// The whole model in two flat vectors the caller owns (one rank; the --check reference).
class WholeModel final : public WeightSource {
 public:
  WholeModel(const ModelLayout& model, std::span<const float> params, std::span<float> grads)
      : units_(model.units()), params_(params), grads_(grads) {}

  [[nodiscard]] StepTensor acquire(std::size_t unit) override { return host_tensor(units_[unit].of(params_)); }
  void release(std::size_t) override {}
  [[nodiscard]] StepTensor gradients(std::size_t unit) override { return host_tensor(zeroed(grads_, units_[unit])); }
  void gradients_done(std::size_t) override {}

 private:
  std::vector<Slice> units_;
  std::span<const float> params_;
  std::span<float> grads_;
};

}  // namespace burst::rt
