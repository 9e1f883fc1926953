#include "runtime/cuda/kernel_path.hpp"

#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt::gpu {

std::string_view kernel_path_name(KernelPath path) { return path == KernelPath::Wgmma ? "wgmma" : "mma.sync"; }

std::string_view kernel_path_choice_name(KernelPathChoice choice) {
  switch (choice) {
    case KernelPathChoice::MmaSync: return "mma.sync";
    case KernelPathChoice::Wgmma: return "wgmma";
    case KernelPathChoice::Auto: break;
  }
  return "auto";
}

std::optional<KernelPathChoice> parse_kernel_path_choice(std::string_view text) {
  for (const KernelPathChoice c : {KernelPathChoice::Auto, KernelPathChoice::MmaSync, KernelPathChoice::Wgmma}) {
    if (text == kernel_path_choice_name(c)) return c;
  }
  return std::nullopt;
}

std::string_view kernel_path_choices() { return "auto, mma.sync, wgmma"; }

namespace {

// Why `arch` cannot run the wgmma path; empty when it can.
std::string wgmma_unavailable(const DeviceArch& arch) {
  if (arch.major == 9) return {};
  return fmt::format("it needs a Hopper GPU (compute capability 9.x); this device is {}.{}", arch.major, arch.minor);
}

}  // namespace

std::vector<KernelPath> supported_paths(const DeviceArch& arch) {
  std::vector<KernelPath> paths{KernelPath::MmaSync};
  if (wgmma_unavailable(arch).empty()) paths.push_back(KernelPath::Wgmma);
  return paths;
}

KernelPath choose_forward_path(KernelPathChoice choice, const DeviceArch& arch, bool operands_aligned,
                               std::string_view call) {
  if (choice != KernelPathChoice::Wgmma) return KernelPath::MmaSync;
  std::string why = wgmma_unavailable(arch);
  if (why.empty() && !operands_aligned) why = "TMA needs Q, K and V to start on 16-byte boundaries";
  if (!why.empty()) {
    throw Error(Problem{std::string(call), "kernel path wgmma cannot run here: " + why, "auto or mma.sync", ""});
  }
  return KernelPath::Wgmma;
}

}  // namespace burst::rt::gpu
