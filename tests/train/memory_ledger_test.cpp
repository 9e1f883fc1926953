// The memory ledger: holds add and release, the peak keeps the breakdown of its moment,
// transients count once, and a step buffer (step_buffer.hpp) holds exactly its bytes until it
// is cleared.
#include <catch2/catch.hpp>

#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/step_buffer.hpp"

using namespace burst::rt;

TEST_CASE("holds add while they live and the peak remembers its breakdown", "[ledger]") {
  MemoryLedger ledger;
  {
    auto a = ledger.hold(MemoryUse::Activations, 100);
    auto s = ledger.hold(MemoryUse::AttentionStash, 40);
    CHECK(ledger.current() == 140);
    ledger.transient(MemoryUse::RingBuffers, 30);  // 170 for an instant
    CHECK(ledger.current() == 140);
    a.release();
    CHECK(ledger.current() == 40);
  }
  CHECK(ledger.current() == 0);
  CHECK(ledger.peak() == 170);
  CHECK(ledger.at_peak() == MemoryLedger::Breakdown{100, 40, 30, 0});
  CHECK(ledger.peak(MemoryUse::RingBuffers) == 30);
  ledger.reset_peaks();
  CHECK(ledger.peak() == 0);
  auto w = ledger.hold(MemoryUse::LossWorkspace, 8);
  CHECK(ledger.peak() == 8);
  CHECK(ledger.peak(MemoryUse::Activations) == 0);
}

TEST_CASE("a moved hold is released once", "[ledger]") {
  MemoryLedger ledger;
  auto a = ledger.hold(MemoryUse::Activations, 64);
  MemoryLedger::Hold b = std::move(a);
  a.release();  // moved from: holds nothing
  CHECK(ledger.current() == 64);
  b = ledger.hold(MemoryUse::Activations, 16);  // the old 64 go
  CHECK(ledger.current() == 16);
}

TEST_CASE("a step buffer holds its floats under its use until cleared", "[ledger]") {
  MemoryLedger ledger;
  HostStepKernels kernels;
  StepBuffer o(kernels, ledger, MemoryUse::Activations, 10);
  const StepBuffer other(kernels, ledger, MemoryUse::Activations, 6);
  CHECK(ledger.current() == 64);
  o.charge_to(ledger, MemoryUse::AttentionStash);
  CHECK(ledger.current() == 64);
  CHECK(ledger.peak() == 64);  // re-charging never counts the bytes twice
  CHECK(ledger.at_peak()[static_cast<std::size_t>(MemoryUse::Activations)] == 64);
  o.clear();
  CHECK(o.empty());
  CHECK(ledger.current() == 24);
  CHECK(to_string(MemoryUse::LossWorkspace) == "lm_head");
}

TEST_CASE("the device column counts each buffer as the GPU step stores it", "[ledger]") {
  MemoryLedger ledger(DeviceLayout{2, false});  // a bf16 plan
  HostStepKernels kernels;                      // the CPU step: fp32 here, as the GPU stores it there
  {
    const StepBuffer q(kernels, ledger, MemoryUse::Activations, 100);                 // bf16 on the GPU
    const StepBuffer lse(kernels, ledger, MemoryUse::Activations, 10, Stored::Fp32);  // fp32 statistics
    auto logits = ledger.hold(MemoryUse::LossWorkspace, 64);                          // the same in both
    auto adam = ledger.hold(MemoryUse::Optimizer, 80, 120);                           // m, v here; master, m, v there
    CHECK(ledger.current(Column::Host) == 400 + 40 + 64 + 80);
    CHECK(ledger.current(Column::Device) == 200 + 40 + 64 + 120);
    ledger.transient(MemoryUse::RingBuffers, 1000, 10);
  }
  CHECK(ledger.current(Column::Device) == 0);
  // Each column keeps its own peak and breakdown.
  CHECK(ledger.peak(Column::Host) == 584 + 1000);
  CHECK(ledger.peak(Column::Device) == 424 + 10);
  CHECK(ledger.at_peak(Column::Device)[static_cast<std::size_t>(MemoryUse::Activations)] == 240);
  CHECK(ledger.peak(MemoryUse::Optimizer, Column::Device) == 120);
  CHECK(ledger.peak(MemoryUse::Optimizer) == 80);
}
