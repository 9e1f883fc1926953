// Where each lane's values sit in the tensor-core fragments, and which shared-memory row each
// lane hands to ldmatrix: the index math of the kernels, as plain functions that g++ tests on
// the CPU (tests/kernels_hd/fragment_layout_test.cpp emulates ldmatrix from the PTX ISA and
// checks every lane and register) and nvcc compiles into the kernels.
//
// mma.sync.m16n8k16 (bf16 inputs, fp32 accumulators), with g = lane / 4 and t = lane % 4
// (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"):
//   A 16 x 16, elements a0..a7 (pairs per 32-bit register, low half first):
//     row g + 8 ((i / 2) % 2), column 2 t + i % 2 + 8 (i / 4)
//   B 16 x 8 (k x n), elements b0..b3: row k = 2 t + i % 2 + 8 (i / 2), column n = g
//   C, D 16 x 8, elements c0..c3:        row g + 8 (i / 2), column 2 t + i % 2
// ldmatrix.x4 loads four 8 x 8 b16 matrices; lanes 8 j .. 8 j + 7 give the addresses of the 8
// rows of matrix j, and lane l receives in register j the elements (row l / 4, columns 2 (l % 4),
// 2 (l % 4) + 1) of matrix j; with .trans, the elements (rows 2 (l % 4), 2 (l % 4) + 1, column
// l / 4). The *_address functions below give the (row, column) of the 16 x 16 block whose
// address a lane hands over, so that the four registers come out as the operand named.
#pragma once

#include "common/host_device.hpp"

namespace burst::rt::gpu::layout {

struct Coord {
  int row = 0;
  int col = 0;
  friend constexpr bool operator==(const Coord&, const Coord&) = default;
};

BURST_HOST_DEVICE constexpr Coord a_element(int lane, int i) {
  return {lane / 4 + 8 * ((i / 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)};
}
BURST_HOST_DEVICE constexpr Coord b_element(int lane, int i) {  // (k, n)
  return {2 * (lane % 4) + i % 2 + 8 * (i / 2), lane / 4};
}
BURST_HOST_DEVICE constexpr Coord c_element(int lane, int i) {
  return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
}

// A (rows x k) from a row-major [row][k] block, plain ldmatrix: registers a0a1 .. a6a7.
BURST_HOST_DEVICE constexpr Coord a_address(int lane) { return {lane % 16, (lane / 16) * 8}; }

// A from its transpose stored row-major as [k][row], ldmatrix .trans.
BURST_HOST_DEVICE constexpr Coord a_address_from_transposed(int lane) {  // (k, row)
  return {(lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8};
}

// B of two adjacent 8-column blocks (registers 0, 1: columns n 0-7; 2, 3: n 8-15) from a
// row-major [n][k] block (the rows of K when S = Q K^T), plain ldmatrix.
BURST_HOST_DEVICE constexpr Coord b_pair_address_from_nk(int lane) {  // (n, k)
  return {(lane / 16) * 8 + lane % 8, ((lane / 8) % 2) * 8};
}

// The same B pair from a row-major [k][n] block (the rows of V when O = P V), ldmatrix .trans.
BURST_HOST_DEVICE constexpr Coord b_pair_address_from_kn(int lane) {  // (k, n)
  return {((lane / 8) % 2) * 8 + lane % 8, (lane / 16) * 8};
}

// The C fragments of two adjacent 16 x 8 blocks are one A fragment of their 16 x 16: A
// register j (elements 2 j, 2 j + 1) holds C elements 2 (j % 2), 2 (j % 2) + 1 of block j / 2.
struct CSource {
  int block = 0;          // 0 or 1: which of the two 8-column blocks
  int first_element = 0;  // 0 or 2: c0c1 or c2c3
};
BURST_HOST_DEVICE constexpr CSource a_register_source(int j) { return {j / 2, (j % 2) * 2}; }

// The inverse: C element i of block `block` (0 or 1) is A register 2 block + i / 2, half i % 2.
struct ARegister {
  int index = 0;
  int half = 0;  // 0: low 16 bits
};
BURST_HOST_DEVICE constexpr ARegister a_register_of(int block, int i) { return {2 * block + i / 2, i % 2}; }

// A lane's accumulators cover two rows, its row pair: elements c0 c1 (pair 0) and c2 c3 (pair 1).
BURST_HOST_DEVICE constexpr int c_row(int lane, int pair) { return c_element(lane, 2 * pair).row; }
BURST_HOST_DEVICE constexpr int c_pair(int i) { return i / 2; }
BURST_HOST_DEVICE constexpr int c_col(int lane, int i) { return c_element(lane, i).col; }

}  // namespace burst::rt::gpu::layout
