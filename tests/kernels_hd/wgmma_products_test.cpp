// The Hopper kernels' chains of products, emulated on the CPU: operands stored where TMA puts them
// in each kernel's shared-memory plan (hopper_traits.hpp), every wgmma computed element by
// element from what its descriptors address (wgmma_layout.hpp) and from the PTX ISA's register
// layouts, and the accumulator of one product packed into the A registers of the next, as the
// kernels do (pack_fragments: fragment_layout.hpp's a_register_source). Each chain must equal
// the plain matrix products:
//   forward   S = Q K^T (consumer c's 64 rows of the kept Q), O = f(S) V
//   dK, dV    S^T = K Q^T, dV = f(S^T) dO; dP^T = V dO^T, dK = g(dP^T) Q
//   dQ        S = Q K^T (consumer c's rows), dP = dO V^T, dQ = g(dP) K
// with f, g elementwise maps standing for the softmax and dS (the element arithmetic is tested
// with the Ampere kernels; what is checked here is which operand each product reads, transposed
// or not, and that an accumulator feeds the next product in place). Small integers keep every
// value exact in bf16 and fp32, so the comparison is exact.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/hopper_traits.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"

using namespace burst::rt::gpu;

namespace {

using Matrix = std::vector<std::vector<float>>;  // [row][col]

Matrix random_matrix(int rows, int cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(-2, 2);
  Matrix m(static_cast<std::size_t>(rows), std::vector<float>(static_cast<std::size_t>(cols)));
  for (auto& row : m) {
    for (float& x : row) x = static_cast<float>(u(rng));
  }
  return m;
}

Matrix multiply_abt(const Matrix& a, const Matrix& b) {  // A B^T
  Matrix c(a.size(), std::vector<float>(b.size(), 0.0f));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < b.size(); ++j) {
      for (std::size_t k = 0; k < a[i].size(); ++k) c[i][j] += a[i][k] * b[j][k];
    }
  }
  return c;
}

Matrix multiply_ab(const Matrix& a, const Matrix& b) {  // A B
  Matrix c(a.size(), std::vector<float>(b[0].size(), 0.0f));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t k = 0; k < b.size(); ++k) {
      for (std::size_t j = 0; j < b[k].size(); ++j) c[i][j] += a[i][k] * b[k][j];
    }
  }
  return c;
}

// Elementwise maps that keep values small integers (exact in bf16).
float f(float x) { return static_cast<float>(static_cast<int>(x) % 3); }
float g(float x) { return static_cast<float>(static_cast<int>(x) % 2 - 1); }
Matrix map(const Matrix& m, float (*fn)(float)) {
  Matrix out = m;
  for (auto& row : out) {
    for (float& x : row) x = fn(x);
  }
  return out;
}

// Shared memory as bytes, holding bf16 values that are small integers (exactly their float's
// high 16 bits).
class Shared {
 public:
  explicit Shared(std::size_t bytes) : bytes_(bytes, 0) {}
  // TMA's store of an operand of `rows` rows and m[0].size() columns at `at`: column blocks of 64
  // (block_bytes apart), row r at 128 r, 16-byte chunk c at chunk c ^ (r % 8).
  void store(std::uint32_t at, std::uint32_t block_bytes, const Matrix& m) {
    for (std::size_t r = 0; r < m.size(); ++r) {
      for (std::size_t c = 0; c < m[r].size(); ++c) {
        const auto block = static_cast<std::uint32_t>(c / 64);
        put(at + block * block_bytes + wgmma::swizzled_offset(static_cast<int>(r), static_cast<int>(c % 64)), m[r][c]);
      }
    }
  }
  [[nodiscard]] float at(std::uint32_t address) const {
    std::uint16_t half = 0;
    std::memcpy(&half, &bytes_.at(address), 2);
    const std::uint32_t bits = std::uint32_t{half} << 16;
    float x = 0;
    std::memcpy(&x, &bits, 4);
    return x;
  }

 private:
  void put(std::uint32_t address, float x) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &x, 4);
    const auto half = static_cast<std::uint16_t>(bits >> 16);
    std::memcpy(&bytes_.at(address), &half, 2);
  }
  std::vector<unsigned char> bytes_;
};

// A warpgroup's accumulators: thread t's float i of a 64 x n product (n / 2 a thread).
using Accumulators = std::vector<std::vector<float>>;  // [128][n / 2]
Accumulators zeros(int n) { return Accumulators(128, std::vector<float>(static_cast<std::size_t>(n / 2), 0.0f)); }

// Thread t's float i of a 64 x n accumulator is element accumulator_element(t, i % 32) of the
// 64-column block i / 32 (one m64n64 product per block).
Matrix gather(const Accumulators& acc, int n) {
  Matrix m(64, std::vector<float>(static_cast<std::size_t>(n)));
  for (int t = 0; t < 128; ++t) {
    for (int i = 0; i < n / 2; ++i) {
      const layout::Coord c = wgmma::accumulator_element(t, i % 32);
      m[static_cast<std::size_t>(c.row)][static_cast<std::size_t>(64 * (i / 32) + c.col)] =
          acc[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)];
    }
  }
  return m;
}

// wgmma m64n64k16, A and B K-major descriptors, over the head dim d: acc = A B^T (issue_product_abt).
void product_abt(Accumulators& acc, const Shared& smem, std::uint32_t a, std::uint32_t a_block, std::uint32_t b,
                 std::uint32_t b_block, int d) {
  for (int kk = 0; kk < d / 16; ++kk) {
    const wgmma::Descriptor da = wgmma::k_major(a, a_block, kk), db = wgmma::k_major(b, b_block, kk);
    for (int t = 0; t < 128; ++t) {
      for (int i = 0; i < 32; ++i) {
        const layout::Coord c = wgmma::accumulator_element(t, i);
        float sum = 0;
        for (int k = 0; k < 16; ++k) {
          sum += smem.at(wgmma::k_major_address(da, c.row, k)) * smem.at(wgmma::k_major_address(db, c.col, k));
        }
        acc[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] = (kk > 0 ? acc[t][i] : 0.0f) + sum;
      }
    }
  }
}

// A 64 x 64 accumulator rounded to bf16 and packed as wgmma's register A operand, per thread
// [kk][register] with each register's two halves (pack_fragments: register j of slice kk holds
// accumulator elements first_element, first_element + 1 of 8-column block 2 kk + block).
using Packed = std::vector<std::array<std::array<std::array<float, 2>, 4>, 4>>;  // [t][kk][j][half]
Packed pack(const Accumulators& acc) {
  Packed p(128);
  for (int t = 0; t < 128; ++t) {
    for (int kk = 0; kk < 4; ++kk) {
      for (int j = 0; j < 4; ++j) {
        const layout::CSource from = layout::a_register_source(j);
        for (int h = 0; h < 2; ++h) {
          p[t][kk][j][h] = acc[t][static_cast<std::size_t>(4 * (2 * kk + from.block) + from.first_element + h)];
        }
      }
    }
  }
  return p;
}

// wgmma m64nNk16 with A from registers (per warp the mma.sync A layout: element e of thread t is
// row 16 (t / 32) + a_element(t % 32, e).row, k a_element(...).col, in register e / 2, half
// e % 2) and B an MN-major descriptor, one 64-column block at a time: acc += P B (issue_product_pb).
void product_pb(Accumulators& acc, const Packed& p, const Shared& smem, std::uint32_t b, std::uint32_t b_block, int d) {
  for (int kk = 0; kk < 4; ++kk) {
    float a[64][16] = {};
    for (int t = 0; t < 128; ++t) {
      for (int e = 0; e < 8; ++e) {
        const layout::Coord c = layout::a_element(t % 32, e);
        a[16 * (t / 32) + c.row][c.col] = p[t][kk][e / 2][e % 2];
      }
    }
    for (int cb = 0; cb < d / 64; ++cb) {
      const wgmma::Descriptor db = wgmma::mn_major(b + static_cast<std::uint32_t>(cb) * b_block, b_block, kk);
      for (int t = 0; t < 128; ++t) {
        for (int i = 0; i < 32; ++i) {
          const layout::Coord c = wgmma::accumulator_element(t, i);
          float sum = 0;
          for (int k = 0; k < 16; ++k) sum += a[c.row][k] * smem.at(wgmma::mn_major_address(db, c.col, k));
          acc[static_cast<std::size_t>(t)][static_cast<std::size_t>(32 * cb + i)] += sum;
        }
      }
    }
  }
}

Accumulators mapped(Accumulators acc, float (*fn)(float)) {
  for (auto& thread : acc) {
    for (float& x : thread) x = fn(x);
  }
  return acc;
}

Matrix rows_of(const Matrix& m, int first, int count) { return {m.begin() + first, m.begin() + first + count}; }

}  // namespace

namespace {

template <int D>
void check_forward(std::mt19937& rng) {
  INFO("head dim " << D);
  using L = HopperForwardSmem<HopperForwardTraits<D>>;
  const Matrix q = random_matrix(128, D, rng), k = random_matrix(64, D, rng), v = random_matrix(64, D, rng);
  Shared smem(L::bytes);
  const int stage = 1;
  smem.store(L::kept_at(0), L::kept_block, q);
  smem.store(L::walked_at(stage, 0), L::walked_block, k);
  smem.store(L::walked_at(stage, 1), L::walked_block, v);
  for (const int consumer : {0, 1}) {
    Accumulators s = zeros(64), o = zeros(D);
    product_abt(s, smem, L::consumer_rows(0, consumer), L::kept_block, L::walked_at(stage, 0), L::walked_block, D);
    const Matrix want_s = multiply_abt(rows_of(q, 64 * consumer, 64), k);
    REQUIRE(gather(s, 64) == want_s);
    product_pb(o, pack(mapped(s, f)), smem, L::walked_at(stage, 1), L::walked_block, D);
    REQUIRE(gather(o, D) == multiply_ab(map(want_s, f), v));
  }
}

template <int D>
void check_key_pass(std::mt19937& rng) {
  INFO("head dim " << D);
  using L = HopperKvSmem<HopperKvTraits<D>>;
  const Matrix k = random_matrix(64, D, rng), v = random_matrix(64, D, rng);
  const Matrix q = random_matrix(64, D, rng), d_o = random_matrix(64, D, rng);
  Shared smem(L::bytes);
  const int stage = 1;
  smem.store(L::kept_at(0), L::kept_block, k);
  smem.store(L::kept_at(1), L::kept_block, v);
  smem.store(L::walked_at(stage, 0), L::walked_block, q);
  smem.store(L::walked_at(stage, 1), L::walked_block, d_o);

  Accumulators s_t = zeros(64), dp_t = zeros(64), d_v = zeros(D), d_k = zeros(D);
  product_abt(s_t, smem, L::consumer_rows(0, 0), L::kept_block, L::walked_at(stage, 0), L::walked_block, D);
  const Matrix want_s_t = multiply_abt(k, q);  // S^T = K Q^T
  REQUIRE(gather(s_t, 64) == want_s_t);
  product_pb(d_v, pack(mapped(s_t, f)), smem, L::walked_at(stage, 1), L::walked_block, D);
  REQUIRE(gather(d_v, D) == multiply_ab(map(want_s_t, f), d_o));  // dV = P^T dO
  product_abt(dp_t, smem, L::consumer_rows(1, 0), L::kept_block, L::walked_at(stage, 1), L::walked_block, D);
  const Matrix want_dp_t = multiply_abt(v, d_o);  // dP^T = V dO^T
  REQUIRE(gather(dp_t, 64) == want_dp_t);
  product_pb(d_k, pack(mapped(dp_t, g)), smem, L::walked_at(stage, 0), L::walked_block, D);
  REQUIRE(gather(d_k, D) == multiply_ab(map(want_dp_t, g), q));  // dK = dS^T Q
}

template <int D>
void check_query_pass(std::mt19937& rng) {
  INFO("head dim " << D);
  using L = HopperDqSmem<HopperDqTraits<D>>;
  const Matrix q = random_matrix(128, D, rng), d_o = random_matrix(128, D, rng);
  const Matrix k = random_matrix(64, D, rng), v = random_matrix(64, D, rng);
  Shared smem(L::bytes);
  const int stage = 2;
  smem.store(L::kept_at(0), L::kept_block, q);
  smem.store(L::kept_at(1), L::kept_block, d_o);
  smem.store(L::walked_at(stage, 0), L::walked_block, k);
  smem.store(L::walked_at(stage, 1), L::walked_block, v);
  for (const int consumer : {0, 1}) {
    Accumulators s = zeros(64), dp = zeros(64), d_q = zeros(D);
    product_abt(s, smem, L::consumer_rows(0, consumer), L::kept_block, L::walked_at(stage, 0), L::walked_block, D);
    REQUIRE(gather(s, 64) == multiply_abt(rows_of(q, 64 * consumer, 64), k));
    product_abt(dp, smem, L::consumer_rows(1, consumer), L::kept_block, L::walked_at(stage, 1), L::walked_block, D);
    const Matrix want_dp = multiply_abt(rows_of(d_o, 64 * consumer, 64), v);
    REQUIRE(gather(dp, 64) == want_dp);
    product_pb(d_q, pack(mapped(dp, g)), smem, L::walked_at(stage, 0), L::walked_block, D);
    REQUIRE(gather(d_q, D) == multiply_ab(map(want_dp, g), k));  // dQ = dS K
  }
}

}  // namespace

TEST_CASE("the Hopper forward's products: S = Q K^T, O = f(S) V", "[wgmma]") {
  std::mt19937 rng(1);
  check_forward<64>(rng);
  check_forward<128>(rng);
}

TEST_CASE("the Hopper dK, dV pass's products read K, V, Q and dO as the math needs", "[wgmma]") {
  std::mt19937 rng(2);
  check_key_pass<64>(rng);
  check_key_pass<128>(rng);
}

TEST_CASE("the Hopper dQ pass's products read Q, dO, K and V as the math needs", "[wgmma]") {
  std::mt19937 rng(3);
  check_query_pass<64>(rng);
  check_query_pass<128>(rng);
}
