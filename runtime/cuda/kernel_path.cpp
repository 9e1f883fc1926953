#include "runtime/cuda/kernel_path.hpp"

#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/kernel_paths.hpp"
#include "common/text.hpp"

namespace burst::rt::gpu {

std::string_view kernel_path_name(KernelPath path) {
  return path == KernelPath::Wgmma ? kernel_paths::kWgmma : kernel_paths::kMmaSync;
}

std::string_view kernel_path_choice_name(KernelPathChoice choice) {
  switch (choice) {
    case KernelPathChoice::MmaSync: return kernel_paths::kMmaSync;
    case KernelPathChoice::Wgmma: return kernel_paths::kWgmma;
    case KernelPathChoice::Auto: break;
  }
  return kernel_paths::kAuto;
}

std::optional<KernelPathChoice> parse_kernel_path_choice(std::string_view text) {
  for (const KernelPathChoice c : {KernelPathChoice::Auto, KernelPathChoice::MmaSync, KernelPathChoice::Wgmma}) {
    if (text == kernel_path_choice_name(c)) return c;
  }
  return std::nullopt;
}

std::string_view kernel_path_choices() {
  static const std::string joined = text::join(kernel_paths::choice_names());
  return joined;
}

KernelPathChoice kernel_path_choice(std::string_view text) {
  const std::optional<KernelPathChoice> choice = parse_kernel_path_choice(text);
  if (!choice) {
    throw Error(Problem{"--kernel-path", fmt::format("unknown kernel path '{}'", text),
                        std::string(kernel_path_choices()), ""});
  }
  return *choice;
}

KernelPathChoice choice_of(KernelPath path) {
  return path == KernelPath::Wgmma ? KernelPathChoice::Wgmma : KernelPathChoice::MmaSync;
}

namespace {

// Why `arch` cannot run a path; empty when it can. sm_90a code runs on compute capability 9.0
// alone; the mma.sync kernels are built for 8.0 and 9.0, and run on every later device.
std::string unavailable(KernelPath path, const DeviceArch& arch) {
  if (path == KernelPath::Wgmma) {
    if (arch.major == 9 && arch.minor == 0) return {};
    return fmt::format("it needs a Hopper GPU (compute capability 9.0, sm_90a); this device is {}.{}", arch.major,
                       arch.minor);
  }
  if (arch.major >= 8) return {};
  return fmt::format("it needs compute capability 8.0 or later (mma.sync on bf16); this device is {}.{}", arch.major,
                     arch.minor);
}

}  // namespace

std::vector<KernelPath> supported_paths(const DeviceArch& arch) {
  std::vector<KernelPath> paths;
  for (const KernelPath p : {KernelPath::MmaSync, KernelPath::Wgmma}) {
    if (unavailable(p, arch).empty()) paths.push_back(p);
  }
  return paths;
}

KernelPath choose_path(KernelPathChoice choice, const DeviceArch& arch, bool operands_aligned, std::string_view call) {
  if (choice == KernelPathChoice::Auto) {
    choice = unavailable(KernelPath::Wgmma, arch).empty() && operands_aligned ? KernelPathChoice::Wgmma
                                                                              : KernelPathChoice::MmaSync;
  }
  const KernelPath path = choice == KernelPathChoice::Wgmma ? KernelPath::Wgmma : KernelPath::MmaSync;
  std::string why = unavailable(path, arch);
  if (why.empty() && path == KernelPath::Wgmma && !operands_aligned) {
    why = "TMA needs its operands (Q, K, V, dO) to start on 16-byte boundaries";
  }
  if (!why.empty()) {
    throw Error(
        Problem{std::string(call), fmt::format("kernel path {} cannot run here: {}", kernel_path_name(path), why),
                path == KernelPath::Wgmma ? "auto or mma.sync" : "a GPU of compute capability 8.0 or later", ""});
  }
  return path;
}

}  // namespace burst::rt::gpu
