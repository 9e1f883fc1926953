#include "runtime/calibration/kernel_speed.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <span>

#include "runtime/calibration/together.hpp"
#include "runtime/kernels/attention.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/parallel.hpp"
#include "runtime/kernels/random_values.hpp"

namespace burst::rt {
namespace {

constexpr std::int64_t kGemmWidth = 1024;  // K = N of the GEMM measurement

// One thing to time: `run` does `flops` (the whole timed run, repeats included).
struct Probe {
  KernelSpeed speed;
  std::function<void()> run;
};

// Repeats `call` (whose first run returned `flops`) until a run does at least `min_flops`.
Probe repeated(KernelSpeed speed, double flops, double min_flops, std::function<void()> call) {
  const auto reps = static_cast<int>(std::max(1.0, std::ceil(min_flops / flops)));
  speed.flops = flops * reps;
  return {std::move(speed), [reps, call = std::move(call)] {
            for (int r = 0; r < reps; ++r) call();
          }};
}

// A ring step as the job's ring pass runs it, around every rank of the calibration: post the
// receive of the travelling block from the previous rank and its send to the next, run the
// step's kernel, wait for both. Where ranks share cores a step then ends with its slowest
// neighbour, as in a job: Open MPI moves a large shared-memory message only inside the
// receiver's calls, and the sender's request completes once the receiver has taken it
// (docs/fidelity.md, "The local machine"). One rank: the kernel alone.
class RingStep {
 public:
  // `block_bytes`: the travelling block (a K,V block of the step in bf16).
  RingStep(Communicator& comm, std::size_t block_bytes)
      : comm_(comm), out_(block_bytes / sizeof(float)), in_(out_.size()) {}
  void run(const std::function<void()>& kernel) {
    const int ranks = comm_.size();
    if (ranks == 1) return kernel();
    const int next = (comm_.rank() + 1) % ranks, previous = (comm_.rank() + ranks - 1) % ranks;
    // One tag for every step: messages between a pair on one tag arrive in order.
    std::array<Request, 2> transfers{
        comm_.irecv(std::span<float>(in_), previous, Channel::KvRing, 0, RingLevel::Flat),
        comm_.isend(std::span<const float>(out_), next, Channel::KvRing, 0, RingLevel::Flat)};
    kernel();
    comm_.wait_all(transfers);
  }

 private:
  Communicator& comm_;
  std::vector<float> out_, in_;
};

// The buffers of one block size's attention pair; they outlive the probes that use them.
struct AttentionBuffers {
  Shape shape;
  std::vector<float> q, k, v, d_o;
  std::vector<std::int64_t> positions;
  Tensor o, d_q, d_k, d_v;
  std::vector<float> lse, delta;

  AttentionBuffers(std::int64_t block, int heads, int head_dim, std::mt19937& rng)
      : shape{block, heads, head_dim},
        q(random_values(shape.elements(), rng)),
        k(random_values(shape.elements(), rng)),
        v(random_values(shape.elements(), rng)),
        d_o(random_values(shape.elements(), rng)),
        positions(contiguous_positions(block)),
        o(shape),
        d_q(shape),
        d_k(shape),
        d_v(shape),
        lse(static_cast<std::size_t>(block * heads)),
        delta(lse.size()) {}
  [[nodiscard]] BlockPair pair() const {
    return {{q.data(), shape}, {k.data(), shape}, {v.data(), shape}, positions, positions};
  }
};

// Each repetition of an attention probe is a ring step (RingStep): the kernels are priced as a
// ring pass runs them.
void add_attention_probes(std::int64_t block, const Mask& base, AttentionBuffers& b, RingStep& ring,
                          const KernelSpeedOptions& o, std::vector<Probe>& probes) {
  const AttentionMask mask{base, {}};
  const std::string mask_name = base.kind == MaskKind::Causal ? "causal" : "full";
  const KernelOptions kernel{};
  // The first calls warm the caches and give the FLOP counts (and the lse the backward needs).
  const double fwd_flops = attention_forward(b.pair(), mask, b.o.view(), b.lse, kernel).flops;
  attention_delta(b.o.view(), {b.d_o.data(), b.shape}, b.delta);
  auto backward = [&b, mask, kernel] {
    return attention_backward(b.pair(), mask, {b.d_o.data(), b.shape}, b.delta, b.lse, b.d_q.view(), b.d_k.view(),
                              b.d_v.view(), kernel);
  };
  const double bwd_flops = backward().flops;
  probes.push_back(repeated({"attn_fwd", mask_name, block}, fwd_flops, o.min_flops_per_run, [&b, &ring, mask, kernel] {
    ring.run([&] { (void)attention_forward(b.pair(), mask, b.o.view(), b.lse, kernel); });
  }));
  probes.push_back(repeated({"attn_bwd", mask_name, block}, bwd_flops, o.min_flops_per_run,
                            [&ring, backward] { ring.run([&] { (void)backward(); }); }));
}

struct GemmBuffers {
  std::int64_t rows;
  std::vector<float> a, b, c;
  GemmBuffers(std::int64_t m, std::mt19937& rng)
      : rows(m),
        a(random_values(m * kGemmWidth, rng)),
        b(random_values(kGemmWidth * kGemmWidth, rng)),
        c(static_cast<std::size_t>(m * kGemmWidth)) {}
  // C = A B with the rows of C split over the kernels' workers, as a dense layer would run.
  void run() {
    const int workers = worker_count(0, rows);
    const std::int64_t share = (rows + workers - 1) / workers;
    parallel_for(workers, workers, [&](int, std::int64_t item) {
      const std::int64_t first = item * share, count = std::min(share, rows - first);
      if (count <= 0) return;
      gemm(1.0f, ConstMatRef{a.data() + first * kGemmWidth, count, kGemmWidth, kGemmWidth}, Op::None,
           ConstMatRef{b.data(), kGemmWidth, kGemmWidth, kGemmWidth}, Op::None, 0.0f,
           MatRef{c.data() + first * kGemmWidth, count, kGemmWidth, kGemmWidth});
    });
  }
};

}  // namespace

std::vector<KernelSpeed> measure_kernel_speeds(Communicator& comm, const KernelSpeedOptions& o) {
  single_threaded_blas();
  std::mt19937 rng(7);
  std::vector<std::unique_ptr<AttentionBuffers>> attention;
  std::vector<std::unique_ptr<RingStep>> rings;
  std::vector<std::unique_ptr<GemmBuffers>> gemms;
  std::vector<Probe> probes;
  for (const std::int64_t block : o.blocks) {
    attention.push_back(std::make_unique<AttentionBuffers>(block, o.heads, o.head_dim, rng));
    // K and V of the block, bf16.
    const auto block_bytes = static_cast<std::size_t>(2 * attention.back()->shape.elements()) * 2;
    rings.push_back(std::make_unique<RingStep>(comm, block_bytes));
    for (const MaskKind kind : {MaskKind::Causal, MaskKind::Full}) {
      add_attention_probes(block, Mask{kind}, *attention.back(), *rings.back(), o, probes);
    }
    gemms.push_back(std::make_unique<GemmBuffers>(block, rng));
    GemmBuffers& g = *gemms.back();
    g.run();
    probes.push_back(repeated({"gemm", "", block}, gemm_flops(block, kGemmWidth, kGemmWidth), o.min_flops_per_run,
                              [&g] { g.run(); }));
  }
  std::vector<double> mine;
  for (int round = 0; round < o.rounds; ++round) {
    for (const Probe& p : probes) mine.push_back(time_together(comm, p.run));
  }
  const std::vector<double> typical = median_of_slowest(comm, mine, probes.size());
  std::vector<KernelSpeed> speeds;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    speeds.push_back(probes[i].speed);
    if (!typical.empty()) speeds.back().seconds = typical[i];
  }
  return speeds;
}

}  // namespace burst::rt
