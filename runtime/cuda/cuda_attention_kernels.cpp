// CudaAttentionKernels (see cuda_attention_kernels.hpp).
//
// Operands and outputs are already in device memory (the executor keeps them there). A call
// finds the pair's positions, block-sparse table and tile list on the device (PairCache: made
// and uploaded on the pair's first call, in one copy, then reused) and launches; it returns
// without waiting for the kernels.
#include "runtime/cuda/cuda_attention_kernels.hpp"

#include <algorithm>
#include <array>
#include <compare>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/detail/device_kernel_memory.hpp"
#include "runtime/cuda/detail/event_timer.hpp"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/detail/tile_list.hpp"
#include "runtime/kernels/checks.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;

// The operands as views for the CPU kernels' shape checks (which read shapes and test data for
// null, never dereference it).
BlockPair shapes_of(const PairOperands& in) {
  const auto view = [](const Operand& x) {
    return ConstView{reinterpret_cast<const float*>(x.data), x.shape};
  };  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
  return {view(in.q), view(in.k), view(in.v), in.q_positions, in.k_positions};
}

void check_dtype(Problems& p, std::string_view call, std::string_view name, DType got, DType want) {
  if (got == want) return;
  p.add(fmt::format("{}: {}", call, name), fmt::format("stored as {}", to_string(got)), std::string(to_string(want)),
        want == DType::BF16 ? "the CUDA kernels read bf16 tiles: plan with --dtype bf16" : "");
}

// The CPU kernels' argument checks, with the GPU's tile size, head_dim limits and bf16 inputs.
void check_pair_for_gpu(Problems& p, std::string_view call, const PairOperands& in, const AttentionMask& mask) {
  check_pair(p, call, shapes_of(in), mask, KernelOptions{gpu::kQueryBlockRows, gpu::kKeyTileRows, 1});
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

const Bf16* bf16_of(const Operand& x) {
  return reinterpret_cast<const Bf16*>(x.data);
}  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): bf16 storage

KernelStats stats_of(const TileList& list, const Shape& q, double flops_per_score_and_dim) {
  KernelStats s;
  s.tiles_computed = q.heads * list.tiles_computed;
  s.tiles_skipped = q.heads * list.tiles_skipped;
  s.flops = flops_per_score_and_dim * static_cast<double>(q.head_dim) * list.scores * static_cast<double>(q.heads);
  s.allowed_pairs = list.allowed_pairs * static_cast<double>(q.heads);
  return s;
}

// A block pair's host arrays (positions, block-sparse table, tile list) on the device, made on
// the pair's first call and kept: the ring runs the same pairs in every layer and every step, so
// after the first step the calls build no tile list and upload nothing (device_traffic.hpp).
// A pair is found by a hash of its positions and mask (64-bit words, FNV-1a) and then compared
// exactly with the positions and mask the entry keeps. The device arrays come from the kernels'
// memory (its stream-ordered pool); the packed host arrays stay with the entry, so the upload
// never reads freed memory however the driver stages it. The cache holds at most kMaxBytes of
// device memory; a pair that would pass it empties it first (after the stream has drained, the
// frees in stream order), so a workload of ever new pairs uploads as before and never grows.
class PairCache {
 public:
  // The pair's PairInputs (its operands in place, its arrays on the device) and its tile lists' counts.
  std::pair<gpu::PairInputs, const KernelTileLists&> get(const PairOperands& in, const AttentionMask& mask,
                                                         KernelMemory& memory, cudaStream_t stream) {
    const std::uint64_t key = hash_of(in, mask);
    Entry* e = nullptr;
    for (auto [it, end] = entries_.equal_range(key); it != end && e == nullptr; ++it) {
      if (it->second.matches(in, mask)) e = &it->second;
    }
    if (e == nullptr) e = &entries_.emplace(key, upload(in, mask, memory, stream))->second;
    const auto at = [&](std::size_t i) { return e->device.data() + e->at[i]; };
    gpu::PairInputs p;
    p.shape = {in.q.shape.tokens, in.k.shape.tokens, in.q.shape.heads, in.k.shape.heads, in.q.shape.head_dim};
    p.q = bf16_of(in.q);
    p.k = bf16_of(in.k);
    p.v = bf16_of(in.v);
    p.q_positions = reinterpret_cast<const std::int64_t*>(
        at(0));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the packed layout of upload()
    p.k_positions = reinterpret_cast<const std::int64_t*>(
        at(1));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the packed layout of upload()
    p.mask = view_of(mask);
    if (mask.sparse)
      p.mask.sparse = reinterpret_cast<const std::uint8_t*>(
          at(kSparse));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the packed layout of upload()
    // A walk's offsets at `offsets`, its tiles right after them (upload()'s layout).
    const auto walk = [&](std::int64_t blocks, std::size_t offsets) -> gpu::DeviceTileWalk {
      return {blocks,
              reinterpret_cast<const std::int32_t*>(
                  at(offsets)),  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): upload()'s layout
              reinterpret_cast<const hd::TileRef*>(
                  at(offsets + 1))};  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): upload()'s layout
    };
    p.tiles.by_query = walk(e->counts.by_query.q_tiles, kByQuery);
    p.tiles.by_key = walk(e->counts.by_key.k_tiles, kByKey);
    p.tiles.by_wide_key = walk(e->counts.by_wide_key.k_tiles, kByWideKey);
    return {p, e->counts};
  }

  // Every entry gone; the stream must have drained (the uploads read their host arrays).
  void clear() {
    entries_.clear();
    used_ = 0;
  }

 private:
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  // The arrays upload() packs, in order: the positions, each walk's offsets then tiles, the
  // block-sparse table (when the mask has one).
  static constexpr std::size_t kByQuery = 2, kByKey = 4, kByWideKey = 6, kSparse = 8;

  struct Entry {
    std::vector<std::int64_t> q_positions, k_positions;
    AttentionMask mask;
    std::vector<std::byte> packed;  // the host arrays, as uploaded
    std::vector<std::size_t> at;    // each array's offset in them
    MemoryBlock device;             // the same bytes in the kernels' memory
    KernelTileLists counts;         // the tile lists' counts (their arrays dropped: they are packed)

    [[nodiscard]] bool matches(const PairOperands& in, const AttentionMask& m) const {
      const auto same = [](const std::vector<std::int64_t>& kept, std::span<const std::int64_t> given) {
        return std::equal(kept.begin(), kept.end(), given.begin(), given.end());
      };
      const bool same_sparse =
          mask.sparse.has_value() == m.sparse.has_value() &&
          (!m.sparse || (mask.sparse->block == m.sparse->block && mask.sparse->blocks == m.sparse->blocks &&
                         mask.sparse->allowed == m.sparse->allowed));
      return same(q_positions, in.q_positions) && same(k_positions, in.k_positions) && mask.base == m.base &&
             same_sparse;
    }
  };

  static void hash_words(std::uint64_t& h, const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p + i, 8);
      h = (h ^ word) * 0x100000001b3ULL;
    }
    for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  }

  static std::uint64_t hash_of(const PairOperands& in, const AttentionMask& mask) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const std::uint64_t sizes[2] = {in.q_positions.size(), in.k_positions.size()};
    hash_words(h, sizes, sizeof sizes);
    hash_words(h, in.q_positions.data(), in.q_positions.size_bytes());
    hash_words(h, in.k_positions.data(), in.k_positions.size_bytes());
    const std::int64_t base[3] = {static_cast<std::int64_t>(mask.base.kind), mask.base.window, mask.base.doc_len};
    hash_words(h, base, sizeof base);
    if (mask.sparse) hash_words(h, mask.sparse->allowed.data(), mask.sparse->allowed.size());
    return h;
  }

  Entry upload(const PairOperands& in, const AttentionMask& mask, KernelMemory& memory, cudaStream_t stream) {
    KernelTileLists lists = build_kernel_tile_lists(in.q_positions, in.k_positions, mask);
    std::vector<std::span<const std::byte>> parts{std::as_bytes(in.q_positions),
                                                  std::as_bytes(in.k_positions),
                                                  std::as_bytes(std::span(lists.by_query.by_query_offsets)),
                                                  std::as_bytes(std::span(lists.by_query.by_query)),
                                                  std::as_bytes(std::span(lists.by_key.by_key_offsets)),
                                                  std::as_bytes(std::span(lists.by_key.by_key)),
                                                  std::as_bytes(std::span(lists.by_wide_key.by_key_offsets)),
                                                  std::as_bytes(std::span(lists.by_wide_key.by_key))};
    if (mask.sparse) parts.push_back(std::as_bytes(std::span(mask.sparse->allowed)));
    Entry e;
    std::size_t bytes = 0;
    for (const auto& part : parts) {
      e.at.push_back((bytes + 15) / 16 * 16);
      bytes = e.at.back() + part.size();
    }
    bytes = std::max<std::size_t>(bytes, 16);
    if (used_ + bytes > kMaxBytes) {
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(before emptying the block pairs' cache)");
      count_host_wait();
      clear();
    }
    e.packed.resize(bytes);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::copy(parts[i].begin(), parts[i].end(), e.packed.begin() + static_cast<std::ptrdiff_t>(e.at[i]));
    }
    e.device = memory.allocate(bytes);
    check_cuda(cudaMemcpyAsync(e.device.data(), e.packed.data(), bytes, cudaMemcpyHostToDevice, stream),
               fmt::format("cudaMemcpyAsync(a block pair's arrays, {} bytes)", bytes));
    count_host_to_device(bytes);
    used_ += bytes;
    e.q_positions.assign(in.q_positions.begin(), in.q_positions.end());
    e.k_positions.assign(in.k_positions.begin(), in.k_positions.end());
    e.mask = mask;
    for (TileList* list : {&lists.by_query, &lists.by_key, &lists.by_wide_key}) {
      list->by_query_offsets = {};
      list->by_query = {};
      list->by_key_offsets = {};
      list->by_key = {};
    }
    e.counts = std::move(lists);
    return e;
  }

  std::multimap<std::uint64_t, Entry> entries_;
  std::size_t used_ = 0;
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
  std::optional<gpu::OwnedStream> own_stream;  // made by the first constructor; the second's is the caller's
  cudaStream_t stream = nullptr;               // own_stream's, or the caller's
  PairCache pairs;
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
    timed_launch(std::forward<Launch>(launch));
    if (options.timed) stats.device_s = times.last();
  }
  // `launch` between timing events where the options ask for device times, else alone.
  template <typename Launch>
  void timed_launch(Launch&& launch) {
    if (options.device_times || options.timed) return times.around(stream, std::forward<Launch>(launch));
    launch();
  }
};

CudaAttentionKernels::CudaAttentionKernels(Options options) : state_(std::make_unique<State>()) {
  state_->options = options;
  gpu::require_cuda_device(options.device);
  state_->select_device();
  // The destructor does not run for a constructor that throws, but state_ goes: a throw from the
  // memory layer takes the stream with it (drained: nothing was queued on it).
  state_->stream = state_->own_stream.emplace().handle();
  state_->own_memory = std::make_unique<gpu::DeviceKernelMemory>(options.device, state_->stream);
  state_->memory = state_->own_memory.get();
}

CudaAttentionKernels::CudaAttentionKernels(Options options, void* stream, KernelMemory& memory)
    : state_(std::make_unique<State>()) {
  state_->options = options;
  gpu::require_cuda_device(options.device);
  state_->select_device();
  if (memory.space() != MemorySpace::Device) {
    throw Error(
        Problem{"CudaAttentionKernels", "host memory to compute in", "the device memory of the stream's owner", ""});
  }
  state_->stream = static_cast<cudaStream_t>(stream);
  state_->memory = &memory;
}

CudaAttentionKernels::~CudaAttentionKernels() {  // no throwing here
  if (!state_ || state_->stream == nullptr) return;
  (void)cudaStreamSynchronize(state_->stream);  // nothing queued still reads the pairs' arrays or the events
  state_->pairs.clear();                        // their blocks freed on the stream, before it goes
  // An own stream goes here, before the State's other members, as it always did; its drain
  // (cuda_stream.hpp) waits only for those frees, the stream having just been synchronised.
  state_->own_stream.reset();
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
  const auto [pair, lists] = s.pairs.get(in, mask, *s.memory, s.stream);
  KernelStats stats = stats_of(lists.by_query, in.q.shape, 4.0);
  s.run(stats, [&] { (void)gpu::flash_forward(pair, o, lse, s.stream, s.options.path); });
  return stats;
}

void CudaAttentionKernels::merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) {
  constexpr std::string_view kCall = "CudaAttentionKernels::merge";
  Problems problems;
  for (const auto& [name, p] :
       {std::pair<const char*, const void*>{"o", o}, {"lse", lse}, {"o_i", o_i}, {"lse_i", lse_i}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();
  State& s = *state_;
  s.select_device();
  s.timed_launch(
      [&] { gpu::merge_partials(o, lse, o_i, lse_i, shape.tokens * shape.heads, shape.head_dim, s.stream); });
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
  s.timed_launch([&] {
    gpu::attention_delta(reinterpret_cast<const float*>(o.data), reinterpret_cast<const float*>(d_o.data),
                         delta,  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
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
  for (const auto& [name, p] :
       {std::pair<const char*, const void*>{"delta", delta}, {"lse", lse}, {"d_q", d_q}, {"d_k", d_k}, {"d_v", d_v}}) {
    check_output(problems, kCall, name, p);
  }
  problems.throw_if_any();

  State& s = *state_;
  s.select_device();
  const auto [pair, lists] = s.pairs.get(in, mask, *s.memory, s.stream);
  const gpu::BackwardInputs grad_in{bf16_of(d_o), lse, delta};
  const gpu::Gradients out{d_q, d_k, d_v};
  KernelStats stats = stats_of(lists.by_key, in.q.shape, 10.0);
  s.run(stats,
        [&] { (void)gpu::flash_backward(pair, grad_in, out, s.options.deterministic, s.stream, s.options.path); });
  return stats;
}

}  // namespace burst::rt
