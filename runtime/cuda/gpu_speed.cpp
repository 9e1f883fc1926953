// measure_gpu_speeds (see runtime/calibration/gpu_speed.hpp): the attention kernels through
// bench_flash, the training step's cuBLASLt GEMM (CublasLtGemm) and a device copy, each timed by
// best_event_time on this rank's GPU, then the slowest rank's time per measurement.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "runtime/calibration/gpu_speed.hpp"
#include "runtime/calibration/together.hpp"
#include "runtime/cuda/detail/cublaslt_gemm.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/device_buffer.hpp"
#include "runtime/cuda/detail/event_timer.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/flash_bench.hpp"
#include "runtime/cuda/kernel_path.hpp"
#include "runtime/kernels/attention_mask.hpp"
#include "runtime/kernels/gemm_shape.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;

// `count` random bf16 values in `buffer`: one MiB of them uploaded, then repeated on the device
// (a GEMM on zeros runs faster than on data, and a 16K-square host array takes seconds to fill).
Bf16* fill_random_bf16(gpu::DeviceBuffer& buffer, std::size_t count, cudaStream_t stream, std::mt19937& rng) {
  Bf16* device = buffer.reserve_for<Bf16>(count);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Bf16> chunk(std::min<std::size_t>(count, std::size_t{1} << 19));
  for (Bf16& x : chunk) x = to_bf16(u(rng));
  check_cuda(cudaMemcpyAsync(device, chunk.data(), chunk.size() * sizeof(Bf16), cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (GEMM inputs)");
  for (std::size_t at = chunk.size(); at < count; at += chunk.size()) {
    check_cuda(cudaMemcpyAsync(device + at, device, std::min(chunk.size(), count - at) * sizeof(Bf16),
                               cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync (GEMM inputs)");
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (GEMM inputs)");
  return device;
}

// The linear layer's forward product at n tokens, n in, n out (bf16 in and out, fp32
// accumulation), as the training step runs it: seconds of the best run.
double gemm_seconds(gpu::CublasLtGemm& gemm, cudaStream_t stream, std::int64_t n, int repeat, std::mt19937& rng) {
  gpu::DeviceBuffer a{"GEMM A"}, b{"GEMM B"}, c{"GEMM C"};
  const auto count = static_cast<std::size_t>(n * n);
  const Bf16* da = fill_random_bf16(a, count, stream, rng);
  const Bf16* db = fill_random_bf16(b, count, stream, rng);
  Bf16* dc = c.reserve_for<Bf16>(count);
  const GemmShape shape = linear_forward_gemm(n, n, n);
  return gpu::best_event_time(repeat, stream, [&] { gemm.run(shape, da, db, dc, gpu::GemmOutput::BF16); });
}

double copy_seconds(cudaStream_t stream, std::size_t bytes, int repeat) {
  gpu::DeviceBuffer from{"copy source"}, to{"copy destination"};
  void* source = from.reserve(bytes);
  void* destination = to.reserve(bytes);
  check_cuda(cudaMemsetAsync(source, 1, bytes, stream), "cudaMemsetAsync (copy source)");
  return gpu::best_event_time(repeat, stream, [&] {
    check_cuda(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync (device to device)");
  });
}

}  // namespace

GpuSpeeds measure_gpu_speeds(Communicator& comm, const GpuSpeedOptions& o) {
  check_cuda(cudaSetDevice(o.device), fmt::format("cudaSetDevice({})", o.device));
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, o.device), "cudaGetDeviceProperties");
  GpuSpeeds speeds;
  speeds.cuda_name = prop.name;
  speeds.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  speeds.multiprocessors = prop.multiProcessorCount;
  std::vector<double> mine;  // this rank's seconds, in the order of speeds.kernels
  const auto measured = [&](KernelSpeed k, double seconds) {
    speeds.kernels.push_back(std::move(k));
    mine.push_back(seconds);
  };
  // The curves are of the path `auto` runs; every other path this GPU runs is measured too and
  // kept apart (KernelSpeed::path), forward and backward alike.
  const gpu::KernelPath runs =
      gpu::choose_path(gpu::KernelPathChoice::Auto, gpu::current_device_arch(), true, "calibrate");
  speeds.attention_path = std::string(gpu::kernel_path_name(runs));
  for (const gpu::KernelPath path : gpu::supported_paths(gpu::current_device_arch())) {
    const std::string apart = path == runs ? std::string() : std::string(gpu::kernel_path_name(path));
    for (const std::int64_t block : o.blocks) {
      for (const MaskKind kind : {MaskKind::Causal, MaskKind::Full}) {
        comm.barrier();  // every rank's GPU busy at once, as in a run
        gpu::FlashBenchCase c{block,    o.heads, o.heads, o.head_dim, AttentionMask{Mask{kind}, {}},
                              o.repeat, false,   o.device};
        c.path = gpu::choice_of(path);
        const gpu::FlashBenchResult r = gpu::bench_flash(c);
        const std::string mask = kind == MaskKind::Causal ? "causal" : "full";
        measured({"attn_fwd", mask, block, r.forward_flops, 0, apart}, r.forward_s);
        measured({"attn_bwd", mask, block, r.backward_flops, 0, apart}, r.backward_s);
      }
    }
  }
  const gpu::OwnedStream stream;  // destroyed however the measuring ends
  gpu::CublasLtGemm gemm(stream.handle(), gpu::recommended_gemm_workspace(prop.major));
  std::mt19937 rng(11);
  for (const std::int64_t n : o.gemm_sides) {
    comm.barrier();
    measured({"gemm", "", n, linear_forward_gemm(n, n, n).flops()},
             gemm_seconds(gemm, stream.handle(), n, o.repeat, rng));
  }
  comm.barrier();
  // One point: the simulator reads the elementwise curve at its large end only.
  measured({"elementwise", "", 1, 2.0 * static_cast<double>(o.copy_bytes)},
           copy_seconds(stream.handle(), o.copy_bytes, o.repeat));
  const std::vector<double> slowest = median_of_slowest(comm, mine, mine.size());
  for (std::size_t i = 0; i < speeds.kernels.size(); ++i) speeds.kernels[i].seconds = slowest.empty() ? 0 : slowest[i];
  return speeds;
}

}  // namespace burst::rt
