// One pass of a ring over a layer: every rank meets every block once, computing where the
// mask allows pairs, while the blocks travel. Used for the forward (K,V circulate) and both
// backward modes (K,V with trailing dK,dV, or the query pack with trailing dQ).
//
// Internal to simulator/attention: lowering.cpp builds the phases out of passes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/token_sets.hpp"
#include "simulator/attention/ring.hpp"
#include "simulator/huge_page_allocator.hpp"
#include "simulator/task_graph.hpp"

namespace burst::sim {

// What a kernel computes when the block of ring rank k visits ring rank q: the query rows and
// key columns with any allowed pair (a zigzag rank's two half-chunks are its parts: an early
// block meets only the first half of the keys, so the kernel is c x c/2; a striped block past
// its rank loses its first query and last key, c-1 x c-1, paired_tokens in
// common/token_sets.hpp), and whether any part pair is only partly allowed (a causal diagonal,
// striped's shifted triangle, a sliding window's edge), which runs the kernel's masked tiles.
// Kernel efficiency depends on both.
struct BlockShape {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  bool masked = false;
};

// Allowed pairs between the queries of ring rank q and the keys of ring rank k, per head and
// sequence, and the shape of that block: R x R entries, shared by the U rings (they hold the
// same tokens). In huge pages: a ring step reads one entry per row, 8 KB apart for R = 1024, a
// TLB miss each on 4 KB pages.
class PairTable {
 public:
  // Throws burst::Error when a rank holds 2^31 tokens or more (a shape keeps 31 bits a side).
  PairTable(const Mask& mask, Layout layout, std::int64_t seq, int ring_size);
  [[nodiscard]] std::int64_t at(int q, int k) const { return pairs_[cell(q, k)]; }
  [[nodiscard]] BlockShape shape(int q, int k) const;
  [[nodiscard]] int ring() const { return ring_; }

 private:
  // A shape in 8 bytes: its rows, and its columns with the masked flag in the top bit.
  struct PackedShape {
    std::uint32_t rows = 0;
    std::uint32_t columns_masked = 0;
  };
  static constexpr std::uint32_t kMasked = 1U << 31;
  [[nodiscard]] std::size_t cell(int q, int k) const {
    return static_cast<std::size_t>(q) * static_cast<std::size_t>(ring_) + static_cast<std::size_t>(k);
  }
  int ring_;
  BigVector<std::int64_t> pairs_;
  BigVector<PackedShape> shapes_;
};

struct RingPass {
  Phase phase = Phase::Forward;
  KernelKind kernel = KernelKind::AttentionForward;
  double flops_per_pair = 0;             // FLOPs of one allowed (query, key) pair, all local heads and batch
  int lanes = 1;                         // batch x heads of the ring: the kernel's independent problems
  double epilogue_bytes_per_row = 0;     // memory traffic after each block's kernel, per query row
  double epilogue_bytes_per_column = 0;  // ... and per key column (merge or gradient accumulation)
  // A block with fewer query rows than its rank holds (zigzag's later half, striped's shifted
  // triangle) writes a slice of the rank's output: the epilogue's further traffic per such row
  // (FamilyCode::copies_merged_slices; 0: merged in place), and the rows a rank holds.
  double slice_copy_bytes_per_row = 0;
  std::int64_t rank_rows = 0;
  Payload block_payload = Payload::KV;
  double block_bytes = 0;  // one hop of the travelling block
  Payload accumulator_payload = Payload::DKV;
  double accumulator_bytes = 0;  // one hop of the trailing accumulator; 0: none (forward)
  // A double ring's later windows (outer steps after the first), where the family's code keeps
  // its accumulators in a narrower type (FamilyCode::gradient_bytes_after_first_window): every
  // hop of the accumulator into them (the one out of the first window included, and the way
  // home) and every epilogue there; unset: as in the first window.
  struct LaterWindows {
    double accumulator_bytes = 0;
    double epilogue_bytes_per_row = 0;
    double epilogue_bytes_per_column = 0;
  };
  std::optional<LaterWindows> later_windows;
  bool queries_travel = false;  // Q ring: the block holds queries, the visitor keys; it travels k -> k-1
  bool overlap = true;          // double buffering
};

// The ring ranks a pass builds tasks for: every rank, or one window of `size` consecutive ring
// ranks (whole nodes) standing for the others, the ring folded onto it. A folded pass makes only
// the tasks of the window's ranks and the transfers into them; a transfer from a rank outside
// keeps its real source GPU (its route is real) but waits for the tasks of the window rank in
// the same place of its own window (home()), as if every window ran in step with this one.
// That is exact when every window sees the same links and does the same work at every step;
// attention/ring_fold.hpp decides when a fold applies and how close it is.
// Folding needs every block to visit every rank (no skipped hops), so that a backward
// accumulator follows its block one step behind.
struct RingWindow {
  int first = 0;  // first ring rank
  int size = 0;   // ring ranks in it; 0: every rank, no fold
  [[nodiscard]] bool folds(int ring) const { return size > 0 && size < ring; }
  [[nodiscard]] bool contains(int rank) const { return rank >= first && rank < first + size; }
  // The window rank standing for ring rank `rank` (itself inside the window); the ring's size
  // is a multiple of the window's.
  [[nodiscard]] int home(int rank, int ring) const { return first + (rank - first + ring) % size; }
};

// The kernel of a pass's block with `pairs` allowed pairs and this shape (GPU and step left 0),
// its epilogue as in a later window of a double ring where `later_window`.
[[nodiscard]] TaskGraph::ComputeSpec block_compute(const RingPass& pass, std::int64_t pairs, const BlockShape& shape,
                                                   bool later_window);

// Per world rank, what the rest of the phase waits for once the ring is done.
struct RingPassEnd {
  std::vector<TaskId> last_compute;      // the rank's last compute (-1: none)
  std::vector<TaskId> accumulator_home;  // its own block's accumulator back home (-1: none)
};

// Appends the pass to `graph` and adds each rank's FLOPs to `flops` (every rank's, folded or
// not). `own_block_deps` holds, per world rank, U-1 tasks (the Ulysses all-to-all into it) that
// its own block waits for; empty when U = 1. `tasks_after`: how many tasks the caller adds after
// the pass (reserved). Under a fold (window.folds()) only the window's ranks get tasks, and the
// RingPassEnd entries of the others stay -1.
RingPassEnd lower_ring_pass(const RingGeometry& geometry, const PairTable& table, const RingPass& pass,
                            const RingWindow& window, const std::vector<TaskId>& own_block_deps, TaskGraph& graph,
                            std::vector<double>& flops, std::size_t tasks_after);

}  // namespace burst::sim
