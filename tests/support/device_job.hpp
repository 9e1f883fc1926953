// A training job whose ranks are threads, each computing on its own Bf16StepKernels
// (bf16_step_kernels.hpp: what the GPU step stores, as it stores it, in memory that calls itself
// device memory), with the job's communicators in host memory and the transports that move
// device memory standing in for NCCL: a loopback whose copy refuses a host buffer on both sides,
// as NCCL does. ZeRO's collectives and a tensor-parallel group's always go over one (a sub-job per
// group, as NCCL's communicator per group); with `device_rings`, every ring of the step too (its
// blocks and the Ulysses all-to-alls), as a GPU job's NCCL transport carries them.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/training_run.hpp"
#include "tests/support/bf16_step_kernels.hpp"

namespace burst::test {

// One side of every copy must be emulated device memory (the other may be the loopback's own
// mailbox, as NCCL's staging is its own).
inline void device_only_copy(void* dst, const void* src, std::size_t bytes) {
  if (!EmulatedDeviceMemory::holds(dst) && !EmulatedDeviceMemory::holds(src)) {
    throw Error(Problem{"a device transport", "a host buffer", "device memory (as NCCL)", ""});
  }
  std::memcpy(dst, src, bytes);
}

// How a device job's ranks are connected (see the head comment).
struct DeviceJobWiring {
  bool device_rings = false;  // every ring over a device-only transport too
  bool device_groups = true;  // TrainingOptions::device_collectives set (false: none, as a misconfigured job)
};

// Every rank's report (rank 0's only; nullopt elsewhere and where a rank threw) and error text
// ("" where none) of `plan` run so.
struct DeviceJobOutcome {
  std::vector<std::optional<rt::TrainingReport>> reports;
  std::vector<std::string> errors;
};

inline DeviceJobOutcome device_job(const plan::Plan& plan, const rt::TrainingOptions& o, DeviceJobWiring wiring) {
  const int world = static_cast<int>(plan.ranks.size());
  const auto job = rt::make_loopback_communicators(world, rt::CommOptions{30});
  auto state_job = rt::make_loopback_communicators(world, rt::CommOptions{30}, device_only_copy);
  std::mutex rings_mutex;  // each ring's transports, made by the first rank that asks for them
  std::map<std::int64_t, std::vector<std::unique_ptr<rt::Communicator>>> rings;
  std::vector<std::unique_ptr<Bf16StepKernels>> kernels;
  DeviceJobOutcome outcome{std::vector<std::optional<rt::TrainingReport>>(static_cast<std::size_t>(world)),
                           std::vector<std::string>(static_cast<std::size_t>(world))};
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) kernels.push_back(std::make_unique<Bf16StepKernels>());
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      try {
        rt::TrainingOptions mine = o;
        mine.ranks_per_device = world;
        mine.backend.step = kernels[i].get();
        if (wiring.device_groups) {
          // Each group's device collectives: a sub-job of the device-only job (the group's host
          // communicator, the job's or a subgroup, reads host memory only), as the GPU loopback's are.
          mine.device_collectives = [&state_job, i](rt::Communicator& group, std::span<const int> members) {
            auto& device_job = dynamic_cast<rt::LoopbackCommunicator&>(*state_job[i]);
            return device_job.group_transport(group, members, rt::function_message_copy(device_only_copy, true));
          };
        }
        if (wiring.device_rings) {
          mine.backend.ring_transport = [&, i](std::int64_t seq) {
            const std::lock_guard lock(rings_mutex);
            auto& set = rings[seq];
            if (set.empty()) set = rt::make_loopback_communicators(world, rt::CommOptions{30}, device_only_copy);
            return std::move(set[i]);
          };
        }
        rt::TrainingRun run(plan, *job[i], mine);
        outcome.reports[i] = run.run();
      } catch (const std::exception& e) {
        outcome.errors[i] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return outcome;
}

// Rank 0's report of `plan` run so, every rank having finished without an error.
inline rt::TrainingReport run_device_job(const plan::Plan& plan, const rt::TrainingOptions& o,
                                         bool device_rings = false) {
  DeviceJobOutcome outcome = device_job(plan, o, {device_rings, true});
  for (const std::string& e : outcome.errors) {
    INFO(e);
    REQUIRE(e.empty());
  }
  REQUIRE(outcome.reports[0]);
  return *outcome.reports[0];
}

}  // namespace burst::test
