// Ring geometry: who computes with whose block at every step, for the flat and the double ring.
//
// World rank g in 0..P-1. Ulysses groups are U consecutive world ranks; group k is ring rank k,
// so there are R = P / U ring ranks, and member j of every group forms its own ring over the
// groups (U rings of R ranks, each for H/U heads, all on the same schedule).
//
// A ring of R ranks is seen as N outer positions x I inner positions (ring rank k = n*I + l):
//   flat ring    I = R, N = 1: rank k receives from k-1 every step.
//   double ring  I = ring ranks per node (or a given inner size dividing R), N = R / I: the
//                inner ring circulates blocks inside a node over NVLink, the outer ring passes
//                each node's blocks to the same inner position of the next node over IB.
// At step t = o*I + i (outer step o, inner step i), ring rank (n, l) holds the block owned by
// ring rank ((n - o) mod N, (l - i) mod I). With N = 1 this is the flat ring's (k - t) mod R.
//
// One definition for the simulator (which costs this schedule) and the runtime (which runs it).
#pragma once

namespace burst {

struct RingGeometry {
  int world = 1;    // P
  int ulysses = 1;  // U
  int ring = 1;     // R = P / U ring ranks
  int inner = 1;    // I
  int outer = 1;    // N = R / I

  [[nodiscard]] int world_rank(int ring_rank, int member) const { return ring_rank * ulysses + member; }
  // The owner (ring rank) of the block `ring_rank` holds at `step` (0 <= step < ring).
  [[nodiscard]] int block_at(int ring_rank, int step) const;
  // The ring rank holding `block` at `step`: block_at(visitor(b, t), t) == b.
  [[nodiscard]] int visitor(int block, int step) const;
};

}  // namespace burst
