// CudaAttentionKernels (see cuda_attention_kernels.hpp).
//
// Operands and outputs are already in device memory (the executor keeps them there,
// DeviceKernelMemory). A call packs the pair's positions, block-sparse table and tile list
// into pinned host memory, sends them in one copy to the same layout on the device, and
// launches; it returns without waiting for the kernels. A pinned slot is rewritten only after
// the copy that last read it is done (an event per slot, two slots); the device copy is
// overwritten only by a later copy on the same stream, so after the kernels that read it.
#include "runtime/cuda/cuda_attention_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/device_kernel_memory.hpp"
#include "runtime/cuda/event_timer.hpp"
#include "runtime/cuda/flash_attention.hpp"
#include "runtime/cuda/kernel_shapes.hpp"
#include "runtime/cuda/tile_list.hpp"
#include "runtime/kernels/checks.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;

// The operands as views for the CPU kernels' shape checks (which read shapes and test data for
// null, never dereference it).
BlockPair shapes_of(const PairOperands& in) {
  const auto view = [](const Operand& x) { return ConstView{reinterpret_cast<const float*>(x.data), x.shape}; };  // NOLINT
  return {view(in.q), view(in.k), view(in.v), in.q_positions, in.k_positions};
}

void check_dtype(Problems& p, std::string_view call, std::string_view name, DType got, DType want) {
  if (got == want) return;
  p.add(fmt::format("{}: {}", call, name), fmt::format("stored as {}", to_string(got)), std::string(to_string(want)),
        want == DType::BF16 ? "the CUDA kernels read bf16 tiles: plan with --dtype bf16" : "");
}

// The CPU kernels' argument checks, with the GPU's tile size, head_dim limits and bf16 inputs.
void check_pair_for_gpu(Problems& p, std::string_view call, const PairOperands& in, const AttentionMask& mask) {
  check_pair(p, call, shapes_of(in), mask, KernelOptions{gpu::kTileRows, gpu::kTileRows, 1});
  if (in.q.shape.head_dim != 64 && in.q.shape.head_dim != 128) {
    p.add(fmt::format("{}: q", call), fmt::format("head_dim {}", in.q.shape.head_dim), "64 or 128",
          "the CUDA kernels are compiled for these two; use the CPU kernels (--device cpu) for others");
  }
  check_dtype(p, call, "q", in.q.dtype, DType::BF16);
  check_dtype(p, call, "k", in.k.dtype, DType::BF16);
  check_dtype(p, call, "v", in.v.dtype, DType::BF16);
}

void check_output(Problems& p, std::string_view call, std::string_view name, const void* data) {
  if (data == nullptr) p.add(fmt::format("{}: {}", call, name), "no data", "a device pointer", "");
}

const Bf16* bf16_of(const Operand& x) { return reinterpret_cast<const Bf16*>(x.data); }  // NOLINT: bf16 storage

KernelStats stats_of(const TileList& list, const Shape& q, double flops_per_score_and_dim) {
  KernelStats s;
  s.tiles_computed = q.heads * list.tiles_computed;
  s.tiles_skipped = q.heads * list.tiles_skipped;
  s.flops = flops_per_score_and_dim * static_cast<double>(q.head_dim) * list.scores * static_cast<double>(q.heads);
  s.allowed_pairs = list.allowed_pairs * static_cast<double>(q.heads);
  return s;
}

// One call's host arrays (positions, block-sparse table, tile list) in one copy (head comment).
// Two pinned slots take turns, each rewritten only once the copy that last read it is done, so
// the host can run a call ahead of the copies. Growing never frees on the hot path: the device
// side comes from the stream-ordered pool (cudaFreeAsync, cudaMallocAsync on the kernels'
// stream), and an outgrown pinned slot is kept until the end (cudaFreeHost would synchronise the
// whole device, NCCL's streams included).
class PairUpload {
 public:
  PairUpload() = default;
  PairUpload(const PairUpload&) = delete;
  PairUpload& operator=(const PairUpload&) = delete;
  // After the kernels' stream has been synchronised (~CudaAttentionKernels).
  ~PairUpload() {
    for (Slot& slot : slots_) {
      if (slot.copied != nullptr) (void)cudaEventDestroy(slot.copied);
      if (slot.pinned != nullptr) (void)cudaFreeHost(slot.pinned);
    }
    for (void* p : retired_) (void)cudaFreeHost(p);
    if (device_ != nullptr) (void)cudaFree(device_);
  }

  // The pair's PairInputs: its operands in place, its host arrays on the device.
  gpu::PairInputs send(const PairOperands& in, const AttentionMask& mask, const TileList& list, cudaStream_t stream) {
    struct Part {
      const void* data;
      std::size_t bytes;
      std::size_t at = 0;
    };
    std::vector<Part> parts{{in.q_positions.data(), in.q_positions.size_bytes()},
                            {in.k_positions.data(), in.k_positions.size_bytes()},
                            {list.by_query_offsets.data(), list.by_query_offsets.size() * sizeof(std::int32_t)},
                            {list.by_query.data(), list.by_query.size() * sizeof(hd::TileRef)},
                            {list.by_key_offsets.data(), list.by_key_offsets.size() * sizeof(std::int32_t)},
                            {list.by_key.data(), list.by_key.size() * sizeof(hd::TileRef)}};
    if (mask.sparse) parts.push_back({mask.sparse->allowed.data(), mask.sparse->allowed.size()});
    std::size_t total = 0;
    for (Part& part : parts) {
      part.at = (total + 15) / 16 * 16;
      total = part.at + part.bytes;
    }
    total = std::max<std::size_t>(total, 16);

    Slot& slot = slots_[next_];
    next_ = (next_ + 1) % slots_.size();
    if (slot.copied == nullptr) {
      check_cuda(cudaEventCreateWithFlags(&slot.copied, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    }
    if (cudaEventQuery(slot.copied) == cudaErrorNotReady) count_host_wait();
    check_cuda(cudaEventSynchronize(slot.copied), "cudaEventSynchronize(the slot's last upload)");
    if (total > slot.bytes) {
      if (slot.pinned != nullptr) retired_.push_back(slot.pinned);
      slot.pinned = nullptr;
      const std::size_t bytes = std::max(total, 2 * slot.bytes);
      slot.bytes = 0;
      check_cuda(cudaMallocHost(&slot.pinned, bytes), fmt::format("cudaMallocHost(pair upload, {} bytes)", bytes));
      count_driver_allocation();
      slot.bytes = bytes;
    }
    if (total > device_bytes_) {
      if (device_ != nullptr) check_cuda(cudaFreeAsync(device_, stream), "cudaFreeAsync(pair upload)");
      device_ = nullptr;
      const std::size_t bytes = std::max(total, 2 * device_bytes_);
      device_bytes_ = 0;
      check_cuda(cudaMallocAsync(&device_, bytes, stream), fmt::format("cudaMallocAsync(pair upload, {} bytes)", bytes));
      count_driver_allocation();
      device_bytes_ = bytes;
    }
    auto* host = static_cast<std::byte*>(slot.pinned);
    for (const Part& part : parts) {
      if (part.bytes > 0) std::memcpy(host + part.at, part.data, part.bytes);
    }
    auto* device = static_cast<std::byte*>(device_);
    check_cuda(cudaMemcpyAsync(device, host, total, cudaMemcpyHostToDevice, stream),
               fmt::format("cudaMemcpyAsync(pair upload, {} bytes)", total));
    count_host_to_device(total);
    check_cuda(cudaEventRecord(slot.copied, stream), "cudaEventRecord(pair upload)");
    const auto at = [&](std::size_t i) { return device + parts[i].at; };

    gpu::PairInputs p;
    p.shape = {in.q.shape.tokens, in.k.shape.tokens, in.q.shape.heads, in.k.shape.heads, in.q.shape.head_dim};
    p.q = bf16_of(in.q);
    p.k = bf16_of(in.k);
    p.v = bf16_of(in.v);
    p.q_positions = reinterpret_cast<const std::int64_t*>(at(0));  // NOLINT: the packed layout above
    p.k_positions = reinterpret_cast<const std::int64_t*>(at(1));  // NOLINT
    p.mask = view_of(mask);
    if (mask.sparse) p.mask.sparse = reinterpret_cast<const std::uint8_t*>(at(6));  // NOLINT
    p.tiles.q_tiles = list.q_tiles;
    p.tiles.k_tiles = list.k_tiles;
    p.tiles.by_query_offsets = reinterpret_cast<const std::int32_t*>(at(2));  // NOLINT
    p.tiles.by_query = reinterpret_cast<const hd::TileRef*>(at(3));           // NOLINT
    p.tiles.by_key_offsets = reinterpret_cast<const std::int32_t*>(at(4));    // NOLINT
    p.tiles.by_key = reinterpret_cast<const hd::TileRef*>(at(5));             // NOLINT
    return p;
  }

 private:
  struct Slot {
    void* pinned = nullptr;
    std::size_t bytes = 0;
    cudaEvent_t copied = nullptr;  // recorded after the copy that last read the slot
  };
  std::array<Slot, 2> slots_{};
  std::size_t next_ = 0;
  std::vector<void*> retired_;  // outgrown pinned slots, freed at the end
  void* device_ = nullptr;      // from the stream-ordered pool
  std::size_t device_bytes_ = 0;
};

// CUDA events around each call's kernels, read once they have run. Past kMaxPending calls
// without a take, the times so far are read (waiting for them) and carried, so the events are
// reused and never grow without bound.
class KernelTimes {
 public:
  // Records `launch` (kernel launches on `stream`) between a pair of events; a launch that
  // throws leaves the pair unused.
  template <typename Launch>
  void around(cudaStream_t stream, Launch&& launch) {
    if (used_ == kMaxPending) carried_ += take();
    if (used_ == events_.size()) events_.push_back(std::make_unique<gpu::EventPair>());
    const gpu::EventPair& events = *events_[used_];
    events.record_start(stream);
    launch();
    events.record_stop(stream);
    ++used_;
  }

  // Seconds of the last call's kernels, waiting for them (timed calls).
  [[nodiscard]] double last() const { return events_[used_ - 1]->seconds(); }

  // Seconds of every call's kernels since the last take, waiting for the last of them.
  [[nodiscard]] double take() {
    double total = std::exchange(carried_, 0.0);
    for (std::size_t i = 0; i < used_; ++i) total += events_[i]->seconds();
    used_ = 0;
    return total;
  }

 private:
  static constexpr std::size_t kMaxPending = 4096;

  std::vector<std::unique_ptr<gpu::EventPair>> events_;
  std::size_t used_ = 0;
  double carried_ = 0;
};

}  // namespace

struct CudaAttentionKernels::State {
  Options options;
  cudaStream_t stream = nullptr;
  bool owns_stream = false;
  PairUpload upload;
  KernelTimes times;
  std::unique_ptr<gpu::DeviceKernelMemory> own_memory;
  KernelMemory* memory = nullptr;  // own_memory, or the step's

  void select_device() const {
    check_cuda(cudaSetDevice(options.device), fmt::format("cudaSetDevice({})", options.device));
  }

  // The pair's kernels, launched between timing events; with Options::timed the call waits for
  // them and their device time goes into `stats`.
  template <typename Launch>
  void run(KernelStats& stats, Launch&& launch) {
    times.around(stream, std::forward<Launch>(launch));
    if (options.timed) stats.device_s = times.last();
  }
};

CudaAttentionKernels::CudaAttentionKernels(Options options) : state_(std::make_unique<State>()) {
  state_->options = options;
  gpu::require_cuda_device(options.device);
  state_->select_device();
  check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  state_->owns_stream = true;
  try {
    state_->own_memory = std::make_unique<gpu::DeviceKernelMemory>(options.device, state_->stream);
  } catch (...) {  // the destructor does not run for a constructor that throws
    (void)cudaStreamDestroy(state_->stream);
    throw;
  }
  state_->memory = state_->own_memory.get();
}

CudaAttentionKernels::CudaAttentionKernels(Options options, void* stream, KernelMemory& memory)
    : state_(std::make_unique<State>()) {
  state_->options = options;
  gpu::require_cuda_device(options.device);
  state_->select_device();
  if (memory.space() != MemorySpace::Device) {
    throw Error(Problem{"CudaAttentionKernels", "host memory to compute in", "the device memory of the stream's owner", ""});
  }
  state_->stream = static_cast<cudaStream_t>(stream);
  state_->memory = &memory;
}

CudaAttentionKernels::~CudaAttentionKernels() {  // no throwing here
  if (!state_ || state_->stream == nullptr) return;
  (void)cudaStreamSynchronize(state_->stream);  // nothing queued still reads the pinned upload or the events
  if (state_->owns_stream) (void)cudaStreamDestroy(state_->stream);
}

KernelMemory& CudaAttentionKernels::memory() { return *state_->memory; }

void* CudaAttentionKernels::stream() const { return state_->stream; }

double CudaAttentionKernels::take_device_seconds() {
  state_->select_device();
  return state_->times.take();
}

KernelStats CudaAttentionKernels::forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) {
  constexpr std::string_view kCall = "CudaAttentionKernels::forward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_output(problems, kCall, "o", o);
  check_output(problems, kCall, "lse", lse);
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.upload.send(in, mask, list, s.stream);
  KernelStats stats = stats_of(list, in.q.shape, 4.0);
  s.run(stats, [&] { gpu::flash_forward(pair, o, lse, s.stream); });
  return stats;
}

void CudaAttentionKernels::merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) {
  constexpr std::string_view kCall = "CudaAttentionKernels::merge";
  Problems problems;
  for (const auto& [name, p] : {std::pair<const char*, const void*>{"o", o}, {"lse", lse}, {"o_i", o_i}, {"lse_i", lse_i}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();
  State& s = *state_;
  s.select_device();
  s.times.around(s.stream, [&] { gpu::merge_partials(o, lse, o_i, lse_i, shape.tokens * shape.heads, shape.head_dim, s.stream); });
}

void CudaAttentionKernels::delta(Operand o, Operand d_o, float* delta) {
  constexpr std::string_view kCall = "CudaAttentionKernels::delta";
  Problems problems;
  check_shape(problems, kCall, "d_o", d_o.shape, o.shape, "o");
  check_dtype(problems, kCall, "o", o.dtype, DType::F32);
  check_dtype(problems, kCall, "d_o", d_o.dtype, DType::F32);
  check_output(problems, kCall, "delta", delta);
  problems.throw_if_any();
  State& s = *state_;
  s.select_device();
  s.times.around(s.stream, [&] {
    gpu::attention_delta(reinterpret_cast<const float*>(o.data), reinterpret_cast<const float*>(d_o.data), delta,  // NOLINT
                         o.shape.tokens * o.shape.heads, o.shape.head_dim, s.stream);
  });
}

KernelStats CudaAttentionKernels::backward(const PairOperands& in, const AttentionMask& mask, Operand d_o,
                                           const float* delta, const float* lse, float* d_q, float* d_k, float* d_v) {
  constexpr std::string_view kCall = "CudaAttentionKernels::backward";
  Problems problems;
  check_pair_for_gpu(problems, kCall, in, mask);
  check_shape(problems, kCall, "d_o", d_o.shape, in.q.shape, "q");
  check_dtype(problems, kCall, "d_o", d_o.dtype, DType::BF16);
  for (const auto& [name, p] : {std::pair<const char*, const void*>{"delta", delta}, {"lse", lse}, {"d_q", d_q},
                                {"d_k", d_k}, {"d_v", d_v}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const TileList list = build_tile_list(in.q_positions, in.k_positions, mask, gpu::kTileRows, gpu::kTileRows);
  const gpu::PairInputs pair = s.upload.send(in, mask, list, s.stream);
  const gpu::BackwardInputs grad_in{bf16_of(d_o), lse, delta};
  const gpu::Gradients out{d_q, d_k, d_v};
  KernelStats stats = stats_of(list, in.q.shape, 10.0);
  s.run(stats, [&] { gpu::flash_backward(pair, grad_in, out, s.options.deterministic, s.stream); });
  return stats;
}

}  // namespace burst::rt
