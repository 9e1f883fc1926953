// `burst calibrate --device cuda`'s measurement on this GPU at the quick size, one rank: every
// kernel timed gives positive, finite work and seconds, the GPU is in burst's GPU table, and
// the file built from it has a point per block size for every curve, each an efficiency in
// (0, 1] that the cost models accept. (The NCCL ping-pong needs two GPUs in two processes; it
// is not run here.)
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>

#include "runtime/calibration/gpu_speed.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/kernel_path.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "simulator/costs/calibration.hpp"
#include "tools/burst/gpu_calibration.hpp"

using namespace burst;

TEST_CASE("the quick GPU calibration measures finite speeds and makes a valid file for a known model") {
  const auto comm = rt::make_self_communicator();
  const rt::GpuSpeedOptions options = rt::quick_gpu_speed_options(0);
  const rt::GpuSpeeds speeds = rt::measure_gpu_speeds(*comm, options);
  CAPTURE(speeds.cuda_name, speeds.pci_bus_id);
  CHECK(speeds.multiprocessors > 0);
  // attention: 2 kernels x 2 masks per block on every path this GPU runs; gemm per side; one copy
  const std::size_t paths = rt::gpu::supported_paths(rt::gpu::current_device_arch()).size();
  CHECK(speeds.kernels.size() == 4 * options.blocks.size() * paths + options.gemm_sides.size() + 1);
  for (const rt::KernelSpeed& k : speeds.kernels) {
    CAPTURE(k.kernel, k.mask, k.block);
    CHECK((std::isfinite(k.flops) && k.flops > 0));
    CHECK((std::isfinite(k.seconds) && k.seconds > 0));
  }
  // This GPU is in burst's table, found by its PCI device id (sysfs) or its name.
  const std::optional<unsigned> pci_device = cli::pci_device_of(speeds.pci_bus_id);
  const topo::hw::GpuModel& model = cli::gpu_model_of(speeds.cuda_name, pci_device);
  if (pci_device && topo::hw::gpu_by_pci_device(*pci_device) != nullptr) {
    CHECK(topo::hw::gpu_by_cuda_name(speeds.cuda_name) == &model);  // the name table agrees with the id
  }
  const Json doc = cli::gpu_calibration_document(
      {speeds.cuda_name, pci_device, speeds.multiprocessors, speeds.kernels, speeds.attention_path, {}, {}}, nullptr);
  const Json& entry = doc["compute"][0];
  CHECK(entry["gpu"] == model.spec.model);
  // What `auto` runs on this GPU (runtime/cuda/kernel_path.hpp); the other paths' curves are kept apart.
  const rt::gpu::KernelPath runs =
      rt::gpu::choose_path(rt::gpu::KernelPathChoice::Auto, rt::gpu::current_device_arch(), true, "test");
  CHECK(entry["attention_path"] == std::string(rt::gpu::kernel_path_name(runs)));
  CHECK(entry.value("attention_paths", Json::object()).size() == paths - 1);
  for (const char* curve : {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked"}) {
    CAPTURE(curve);
    REQUIRE(entry[curve].size() == options.blocks.size());
    for (const Json& point : entry[curve]) {
      const double e = point[1].get<double>();
      CHECK((std::isfinite(e) && e > 0 && e <= 1));
    }
  }
  CHECK(entry["gemm"].size() == options.gemm_sides.size());
  CHECK(entry["elementwise"].size() == 1);
  const sim::Calibration c = sim::apply_calibration(sim::default_calibration(), doc, "measured");
  CHECK(c.compute_for(model.spec.model).gpu == model.spec.model);
  CHECK(c.compute_for(model.spec.model).multiprocessors == speeds.multiprocessors);
}
