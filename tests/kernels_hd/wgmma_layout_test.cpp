// The Hopper path's operand layouts (runtime/cuda/detail/wgmma_layout.hpp) checked on the CPU,
// element by element: a model of what a TMA load with CU_TENSOR_MAP_SWIZZLE_128B stores where
// (CUDA driver API, transcribed here independently: row r at 128 r bytes, 16-byte chunk c at
// chunk c ^ (r % 8)) must hold, at the address every wgmma descriptor of the kernel reads, the
// element the product expects, for Q, K (K-major) and V (MN-major) at both head dims; the
// descriptor's bit fields; the accumulator layout against the PTX ISA's formula; and the
// shared-memory plans of the Hopper kernels (hopper_traits.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>

#include "runtime/cuda/detail/hopper_traits.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"
#include "runtime/cuda/kernel_path.hpp"

using namespace burst::rt::gpu;

namespace {

// Where a TMA box of 128-byte rows put element (row, col) of a tile of `cols` columns stored as
// column blocks of 64, `block_bytes` apart, from `base` (1024-byte aligned).
std::uint32_t tma_address(std::uint32_t base, std::uint32_t block_bytes, int row, int col) {
  const int block = col / 64, in_block = col % 64;
  const int chunk = in_block / 8;
  return base + static_cast<std::uint32_t>(block) * block_bytes + static_cast<std::uint32_t>(row) * 128u +
         static_cast<std::uint32_t>((chunk ^ (row % 8)) * 16 + (in_block % 8) * 2);
}

constexpr std::uint32_t kBase = 0x4000;  // a 1024-byte aligned shared-memory address

}  // namespace

TEST_CASE("wgmma K-major descriptors read Q and K where TMA stored them", "[wgmma]") {
  for (const int d : {64, 128}) {
    const std::uint32_t q_block = 128 * 128, k_block = 64 * 128;
    for (const int consumer : {0, 1}) {  // A = 64 of Q's 128 rows
      const std::uint32_t rows = kBase + static_cast<std::uint32_t>(64 * consumer * 128);
      for (int kk = 0; kk < d / 16; ++kk) {
        const wgmma::Descriptor a = wgmma::k_major(rows, q_block, kk);
        for (int m = 0; m < 64; ++m) {
          for (int k = 0; k < 16; ++k) {
            REQUIRE(wgmma::k_major_address(a, m, k) == tma_address(kBase, q_block, 64 * consumer + m, 16 * kk + k));
          }
        }
      }
    }
    for (int kk = 0; kk < d / 16; ++kk) {  // B = K, n = the 64 keys
      const wgmma::Descriptor b = wgmma::k_major(kBase, k_block, kk);
      for (int n = 0; n < 64; ++n) {
        for (int k = 0; k < 16; ++k)
          REQUIRE(wgmma::k_major_address(b, n, k) == tma_address(kBase, k_block, n, 16 * kk + k));
      }
    }
  }
}

TEST_CASE("wgmma MN-major descriptors read V where TMA stored it", "[wgmma]") {
  const std::uint32_t block = 64 * 128;
  for (const int d : {64, 128}) {
    for (int kk = 0; kk < 4; ++kk) {  // k = keys 16 kk .. 16 kk + 15
      // The kernel's products: one 64-column block of V per wgmma.
      for (int cb = 0; cb < d / 64; ++cb) {
        const wgmma::Descriptor b = wgmma::mn_major(kBase + static_cast<std::uint32_t>(cb) * block, block, kk);
        for (int n = 0; n < 64; ++n) {
          for (int k = 0; k < 16; ++k) {
            REQUIRE(wgmma::mn_major_address(b, n, k) == tma_address(kBase, block, 16 * kk + k, 64 * cb + n));
          }
        }
      }
      // One descriptor over every column block: LBO steps from one to the next.
      const wgmma::Descriptor whole = wgmma::mn_major(kBase, block, kk);
      for (int n = 0; n < d; ++n) {
        for (int k = 0; k < 16; ++k)
          REQUIRE(wgmma::mn_major_address(whole, n, k) == tma_address(kBase, block, 16 * kk + k, n));
      }
    }
  }
}

TEST_CASE("wgmma descriptor bit fields", "[wgmma]") {
  // start 0x1230 >> 4 in bits 0-13, LBO 16 >> 4 in 16-29, SBO 1024 >> 4 in 32-45, 128-byte swizzle = 1 in 62-63.
  CHECK(wgmma::encode({0x1230, 16, 1024, wgmma::Swizzle::Bytes128}) == 0x4000004000010123ull);
  CHECK(wgmma::encode({0x3FFF0, 0, 0, wgmma::Swizzle::None}) == 0x3FFFull);
  // A k16 slice of a K-major tile starts 32 bytes on within the swizzle row, then at the next column block.
  CHECK(wgmma::k_major(kBase, 8192, 3).start == kBase + 96);
  CHECK(wgmma::k_major(kBase, 8192, 4).start == kBase + 8192);
  CHECK(wgmma::mn_major(kBase, 8192, 2).start == kBase + 4096);
}

TEST_CASE("wgmma accumulators follow the PTX ISA layout and cover the tile once", "[wgmma]") {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t) {
    for (int i = 0; i < 32; ++i) {  // m64n64: 32 floats a thread
      // PTX ISA, "Register fragment layout for accumulator matrix D" of wgmma .m64nNk16.
      const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
      const int col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
      const layout::Coord c = wgmma::accumulator_element(t, i);
      REQUIRE(c == layout::Coord{row, col});
      seen.insert({c.row, c.col});
    }
  }
  CHECK(seen.size() == 64u * 64u);
}

TEST_CASE("swizzled tiles are conflict-free along a column", "[wgmma]") {
  // The 8 rows of a swizzle period put one logical 16-byte chunk in 8 distinct bank groups.
  for (int chunk = 0; chunk < 8; ++chunk) {
    std::set<std::uint32_t> groups;
    for (int row = 0; row < 8; ++row) groups.insert((wgmma::swizzled_offset(row, chunk * 8) % 128) / 16);
    CHECK(groups.size() == 8u);
  }
}

namespace {

// A Hopper kernel's plan: every operand tile starts 1024-byte aligned (the swizzle's period),
// the scalars and barriers 8-byte aligned, and its resident blocks fit a Hopper multiprocessor.
template <class T, class L>
void check_hopper_plan() {
  INFO("head dim " << T::kHeadDim << ", " << T::kRows << " rows");
  CHECK(L::walked % L::kAlign == 0);
  CHECK(L::walked_stage % L::kAlign == 0);
  CHECK(L::walked_operand % L::kAlign == 0);
  CHECK(L::kept_operand % L::kAlign == 0);
  CHECK(L::scalars % 8 == 0);
  CHECK(L::barriers % 8 == 0);
  CHECK(L::kept_block == wgmma::tile_bytes(T::kRows));
  CHECK(L::walked_block == wgmma::tile_bytes(T::kTileRows));
  CHECK(T::kThreads == 128 * (T::kConsumers + 1));
  CHECK(T::kMinBlocks * (L::bytes + kReservedSharedPerBlock) <= kSharedBytesPerSm90);
  // The registers setmaxnreg hands out come from the block's share at launch.
  CHECK(128 * (T::kProducerRegisters + T::kConsumers * T::kConsumerRegisters) <= T::kThreads * T::kLaunchRegisters);
}

}  // namespace

TEST_CASE("the Hopper kernels' shared-memory plans", "[wgmma]") {
  check_hopper_plan<HopperForwardTraits<64>, HopperForwardSmem<HopperForwardTraits<64>>>();
  check_hopper_plan<HopperForwardTraits<128>, HopperForwardSmem<HopperForwardTraits<128>>>();
  check_hopper_plan<HopperDqTraits<128>, HopperDqSmem<HopperDqTraits<128>>>();
  check_hopper_plan<HopperKvTraits<64>, HopperKvSmem<HopperKvTraits<64>>>();
  check_hopper_plan<HopperKvTraits<128>, HopperKvSmem<HopperKvTraits<128>>>();
  CHECK(HopperForwardTraits<128>::kThreads == 384);
  CHECK(HopperForwardTraits<128>::kLaunchRegisters == 168);
  CHECK(HopperKvTraits<128>::kThreads == 256);
  CHECK(HopperKvTraits<128>::kLaunchRegisters == 128);
  // The forward fits sm_80's limit too (its plan predates the Hopper one); the dK, dV pass's
  // scalars follow its two walked operands in each stage.
  CHECK(HopperForwardSmem<HopperForwardTraits<128>>::bytes <= kMaxSharedBytesSm80);
  using KvScalars = HopperKvScalars<HopperKvTraits<128>>;
  CHECK(KvScalars::lse == 64 * 8);
  CHECK(KvScalars::bytes == 64 * 16);
}

TEST_CASE("kernel paths: names, choices and the rule that picks one", "[wgmma]") {
  CHECK(parse_kernel_path_choice("wgmma") == KernelPathChoice::Wgmma);
  CHECK(parse_kernel_path_choice("mma.sync") == KernelPathChoice::MmaSync);
  CHECK(parse_kernel_path_choice("auto") == KernelPathChoice::Auto);
  CHECK_FALSE(parse_kernel_path_choice("hopper").has_value());
  CHECK(kernel_path_choice("wgmma") == KernelPathChoice::Wgmma);
  CHECK_THROWS_WITH(kernel_path_choice("hopper"),
                    Catch::Contains("--kernel-path: unknown kernel path 'hopper' (valid: auto, mma.sync, wgmma)"));
  CHECK(choice_of(KernelPath::Wgmma) == KernelPathChoice::Wgmma);
  CHECK(choice_of(KernelPath::MmaSync) == KernelPathChoice::MmaSync);
  const DeviceArch a100{8, 0}, h100{9, 0};
  CHECK(supported_paths(a100) == std::vector<KernelPath>{KernelPath::MmaSync});
  CHECK(supported_paths(h100) == std::vector<KernelPath>{KernelPath::MmaSync, KernelPath::Wgmma});
  // auto: wgmma where it can run, mma.sync where TMA cannot load the operands or the GPU is not 9.0.
  CHECK(choose_path(KernelPathChoice::Auto, h100, true, "f") == KernelPath::Wgmma);
  CHECK(choose_path(KernelPathChoice::Auto, h100, false, "f") == KernelPath::MmaSync);
  CHECK(choose_path(KernelPathChoice::Auto, a100, true, "f") == KernelPath::MmaSync);
  CHECK(choose_path(KernelPathChoice::Wgmma, h100, true, "f") == KernelPath::Wgmma);
  CHECK_THROWS_WITH(choose_path(KernelPathChoice::Wgmma, a100, true, "flash_forward"),
                    Catch::Contains("flash_forward: kernel path wgmma") && Catch::Contains("this device is 8.0"));
  CHECK_THROWS_WITH(choose_path(KernelPathChoice::Wgmma, h100, false, "f"), Catch::Contains("16-byte"));
  // sm_90a code runs on 9.0 alone; the mma.sync kernels need 8.0 or later.
  const DeviceArch hopper_next{9, 2}, volta{7, 0};
  CHECK(supported_paths(hopper_next) == std::vector<KernelPath>{KernelPath::MmaSync});
  CHECK(supported_paths(volta).empty());
  CHECK_THROWS_WITH(choose_path(KernelPathChoice::Auto, volta, true, "flash_forward"),
                    Catch::Contains("kernel path mma.sync cannot run here") && Catch::Contains("this device is 7.0"));
}
