// The CUDA kernels' index math (runtime/cuda/detail/fragment_layout.hpp) checked on the CPU, lane by
// lane: ldmatrix is emulated from its PTX ISA description and the mma.m16n8k16 fragment tables
// are transcribed here independently, so every address a kernel hands to ldmatrix must land the
// element the mma expects in every register of every lane, and the C -> A repacking that feeds
// P into P V (and dS into dS K, dS^T Q) must hold. Also: padded tile rows make each ldmatrix
// phase conflict-free, and every fragment covers its matrix exactly once.
#include <catch2/catch.hpp>

#include <set>

#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"

using namespace burst::rt::gpu;
using layout::Coord;

namespace {

// PTX ISA, mma.m16n8k16 .bf16 fragments, transcribed: g = lane >> 2, t = lane % 4.
Coord ptx_a(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  const bool upper_rows = !(i < 2 || (4 <= i && i < 6));
  return {upper_rows ? g + 8 : g, t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
Coord ptx_b(int lane, int i) {  // (k, n)
  const int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Coord ptx_c(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

// ldmatrix.x4 (PTX ISA): lanes 8 j .. 8 j + 7 give the row addresses of matrix j; lane l gets
// in register j, half h (h = 0 the low half), matrix j's element (row l / 4, column 2 (l % 4) + h),
// or with .trans its element (row 2 (l % 4) + h, column l / 4). Returns the element's (row,
// column) in the stored block, from the (row, column) each lane addressed.
template <typename Address>
Coord ldmatrix_element(Address address, int lane, int reg, int half, bool trans) {
  const int row_in_matrix = trans ? 2 * (lane % 4) + half : lane / 4;
  const int col_in_matrix = trans ? lane / 4 : 2 * (lane % 4) + half;
  const Coord row_start = address(8 * reg + row_in_matrix);
  return {row_start.row, row_start.col + col_in_matrix};
}

}  // namespace

TEST_CASE("the fragment tables are the PTX ISA's") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) CHECK(layout::a_element(lane, i) == ptx_a(lane, i));
    for (int i = 0; i < 4; ++i) CHECK(layout::b_element(lane, i) == ptx_b(lane, i));
    for (int i = 0; i < 4; ++i) CHECK(layout::c_element(lane, i) == ptx_c(lane, i));
  }
}

TEST_CASE("each fragment covers its matrix exactly once") {
  std::set<std::pair<int, int>> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) a.insert({layout::a_element(lane, i).row, layout::a_element(lane, i).col});
    for (int i = 0; i < 4; ++i) b.insert({layout::b_element(lane, i).row, layout::b_element(lane, i).col});
    for (int i = 0; i < 4; ++i) c.insert({layout::c_element(lane, i).row, layout::c_element(lane, i).col});
  }
  CHECK(a.size() == 16 * 16);
  CHECK(b.size() == 16 * 8);
  CHECK(c.size() == 16 * 8);
}

TEST_CASE("ldmatrix of a row-major block gives the A fragment") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      for (int half = 0; half < 2; ++half) {
        INFO("lane " << lane << ", register " << reg << ", half " << half);
        const Coord got = ldmatrix_element(layout::a_address, lane, reg, half, false);  // [m][k]
        CHECK(got == layout::a_element(lane, 2 * reg + half));
      }
    }
  }
}

TEST_CASE("ldmatrix .trans of the transposed block gives the A fragment") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      for (int half = 0; half < 2; ++half) {
        INFO("lane " << lane << ", register " << reg << ", half " << half);
        const Coord got = ldmatrix_element(layout::a_address_from_transposed, lane, reg, half, true);  // [k][m]
        const Coord want = layout::a_element(lane, 2 * reg + half);
        CHECK(got == Coord{want.col, want.row});
      }
    }
  }
}

TEST_CASE("ldmatrix of a [n][k] block gives the B fragments of two 8-column blocks") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      for (int half = 0; half < 2; ++half) {
        INFO("lane " << lane << ", register " << reg << ", half " << half);
        const Coord got = ldmatrix_element(layout::b_pair_address_from_nk, lane, reg, half, false);  // (n, k)
        const Coord want = layout::b_element(lane, 2 * (reg % 2) + half);                            // (k, n)
        CHECK(got == Coord{want.col + 8 * (reg / 2), want.row});
      }
    }
  }
}

TEST_CASE("ldmatrix .trans of a [k][n] block gives the B fragments of two 8-column blocks") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      for (int half = 0; half < 2; ++half) {
        INFO("lane " << lane << ", register " << reg << ", half " << half);
        const Coord got = ldmatrix_element(layout::b_pair_address_from_kn, lane, reg, half, true);  // (k, n)
        const Coord want = layout::b_element(lane, 2 * (reg % 2) + half);
        CHECK(got == Coord{want.row, want.col + 8 * (reg / 2)});
      }
    }
  }
}

TEST_CASE("the C fragments of two 8-column blocks are the A fragment of their 16 x 16") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      const layout::CSource from = layout::a_register_source(reg);
      for (int half = 0; half < 2; ++half) {
        INFO("lane " << lane << ", register " << reg << ", half " << half);
        const Coord c = layout::c_element(lane, from.first_element + half);
        CHECK(Coord{c.row, c.col + 8 * from.block} == layout::a_element(lane, 2 * reg + half));
        const layout::ARegister back = layout::a_register_of(from.block, from.first_element + half);
        CHECK(back.index == reg);
        CHECK(back.half == half);
      }
    }
  }
}

TEST_CASE("a lane's accumulators form a row pair") {
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      CHECK(layout::c_element(lane, i).row == layout::c_row(lane, layout::c_pair(i)));
      CHECK(layout::c_element(lane, i).col == layout::c_col(lane, i));
    }
    CHECK(layout::c_row(lane, 1) == layout::c_row(lane, 0) + 8);
    CHECK(layout::c_col(lane, 1) == layout::c_col(lane, 0) + 1);  // float2 stores of (c0, c1)
    CHECK(layout::c_col(lane, 0) % 2 == 0);
  }
  // The four lanes of a quad share rows, so row maxima and sums reduce over lane ^ 1, lane ^ 2.
  for (int lane = 0; lane < 32; ++lane) {
    CHECK(layout::c_row(lane ^ 1, 0) == layout::c_row(lane, 0));
    CHECK(layout::c_row(lane ^ 2, 0) == layout::c_row(lane, 0));
  }
}

TEST_CASE("padded tile rows make every ldmatrix phase conflict-free and 16-byte aligned") {
  using Address = Coord (*)(int);
  for (const int cols : {64, 128}) {
    const int stride = cols + kRowPad;  // bf16 elements per shared row
    for (const Address address : {Address{layout::a_address}, Address{layout::a_address_from_transposed},
                                  Address{layout::b_pair_address_from_nk}, Address{layout::b_pair_address_from_kn}}) {
      for (int matrix = 0; matrix < 4; ++matrix) {
        std::set<int> bank_groups;
        for (int r = 0; r < 8; ++r) {
          const Coord at = address(8 * matrix + r);
          const int byte = (at.row * stride + at.col) * 2;
          CHECK(byte % 16 == 0);
          bank_groups.insert((byte / 16) % 8);
        }
        INFO("rows of " << cols << " elements, matrix " << matrix);
        CHECK(bank_groups.size() == 8);
      }
    }
  }
}
