// Which implementation of the attention kernels runs: the kernel paths (their names, which plans
// record and calibrations name curves by, are common/kernel_paths.hpp's), how a user asks for one
// (`burst plan`, `burst run` and `burst bench attention` --kernel-path, a plan's /job/kernel_path,
// CudaKernelOptions::path) and the rule that picks one for a device.
//
//   mma.sync  warp-level tensor-core products (m16n8k16) with cp.async-pipelined tiles: every
//             GPU of compute capability 8.0 and up, forward and backward
//   wgmma     the Hopper kernels: warpgroup products (wgmma) reading shared memory that the
//             tensor memory accelerator (TMA) fills through mbarrier-tracked stages, a producer
//             warpgroup feeding consumer warpgroups, forward and backward (the backward in two
//             passes, deterministic always); compute capability 9.0 (its sm_90a code, which
//             every CUDA build carries, runs there alone)
//
// `auto` picks wgmma where it can run (compute capability 9.0, operands TMA can load) and
// mma.sync everywhere else: on an H200 the wgmma kernels passed the GPU suite and ran 1.2-2.0x
// mma.sync's forward and 1.3x its head-dim-128 backward, 0.92-0.99x its head-dim-64 one
// (docs/runtime-cuda.md, "Kernel paths").
// Asking by name for a path the device cannot run is an error that says why, never a silent
// fallback.
// Plain C++ (no CUDA), so the rule is tested on every machine.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace burst::rt::gpu {

enum class KernelPath { MmaSync, Wgmma };
enum class KernelPathChoice { Auto, MmaSync, Wgmma };

[[nodiscard]] std::string_view kernel_path_name(KernelPath path);
[[nodiscard]] std::string_view kernel_path_choice_name(KernelPathChoice choice);
// "auto", "mma.sync" or "wgmma"; nullopt for anything else.
[[nodiscard]] std::optional<KernelPathChoice> parse_kernel_path_choice(std::string_view text);
// The same, or burst::Error "--kernel-path: unknown kernel path '<text>'" with the valid names.
[[nodiscard]] KernelPathChoice kernel_path_choice(std::string_view text);
// Asking for `path` by name.
[[nodiscard]] KernelPathChoice choice_of(KernelPath path);
// The accepted spellings, for --help and errors: "auto, mma.sync, wgmma".
[[nodiscard]] std::string_view kernel_path_choices();

// What decides the path: the device's compute capability.
struct DeviceArch {
  int major = 0;
  int minor = 0;
};

// The paths this device can run, mma.sync first (none before compute capability 8.0).
[[nodiscard]] std::vector<KernelPath> supported_paths(const DeviceArch& arch);
// The path for `choice` on `arch`, either direction; `operands_aligned`: the bf16 operands (Q,
// K, V, and dO for the backward) start on 16-byte boundaries (what TMA needs). Auto: wgmma where
// it can run, else mma.sync. Throws burst::Error naming `call`, the path and the reason when the
// choice cannot run here.
[[nodiscard]] KernelPath choose_path(KernelPathChoice choice, const DeviceArch& arch, bool operands_aligned,
                                     std::string_view call);

}  // namespace burst::rt::gpu
