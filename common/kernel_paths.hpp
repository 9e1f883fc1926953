// The names of the CUDA attention kernels' implementations ("kernel paths"): what `--kernel-path`
// accepts, what a plan records (/job/kernel_path) and what a calibration file names its curves
// by. The names alone, in plain C++, so the plan contract, the planner's tools and the cost
// models can check and carry one without the CUDA runtime; runtime/cuda/kernel_path.hpp gives
// their meaning and the rule that picks one for a device.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace burst::kernel_paths {

inline constexpr std::string_view kAuto = "auto";         // the device's default path
inline constexpr std::string_view kMmaSync = "mma.sync";  // warp-level products, compute capability 8.0 and up
inline constexpr std::string_view kWgmma = "wgmma";       // warpgroup products with TMA, compute capability 9.0
inline constexpr std::array<std::string_view, 3> kChoices = {kAuto, kMmaSync, kWgmma};

// kChoices as strings, for the checks that list the valid names (CLI11, the JSON readers).
inline std::vector<std::string> choice_names() { return {kChoices.begin(), kChoices.end()}; }

}  // namespace burst::kernel_paths
