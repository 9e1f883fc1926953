// HostKernelMemory (runtime/kernels/kernel_memory.hpp), the ring pass's element operations in
// host memory: bf16 stores round to nearest even and loads widen exactly, an arriving
// accumulator adds in its wire dtype, a partial converts to it, and dtypes other than fp32 and
// bf16 are refused by name. The CUDA backend's DeviceKernelMemory must agree with these.
#include <catch2/catch.hpp>

#include <vector>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/kernels/kernel_memory.hpp"

using namespace burst;

TEST_CASE("host kernel memory: store, load, accumulate, convert and zero in fp32 and bf16") {
  rt::HostKernelMemory memory;
  CHECK(memory.space() == rt::MemorySpace::Host);
  const std::vector<float> values{1.0f, 1.00390625f, -2.5f, 3.14159265f, 1e-3f};  // 1 + 2^-8 is a bf16 tie
  const rt::MemoryBlock bf16 = memory.allocate(values.size() * 2), fp32 = memory.allocate(values.size() * 4);
  CHECK(bf16.bytes() == values.size() * 2);
  memory.store(values, rt::DType::BF16, bf16.data());
  memory.store(values, rt::DType::F32, fp32.data());
  std::vector<float> back(values.size());
  memory.load(bf16.data(), rt::DType::BF16, back);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(back[i] == round_to_bf16(values[i]));
  CHECK(back[1] == 1.0f);  // the tie goes to the even neighbour
  memory.load(fp32.data(), rt::DType::F32, back);
  CHECK(back == values);

  // sum += an fp32 and a bf16 accumulator; then the sum converted to bf16.
  const rt::MemoryBlock sum = memory.allocate(values.size() * 4);
  memory.zero(sum.data(), sum.bytes());
  memory.accumulate(sum.floats(), fp32.data(), rt::DType::F32, values.size());
  memory.accumulate(sum.floats(), bf16.data(), rt::DType::BF16, values.size());
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(sum.floats()[i] == values[i] + round_to_bf16(values[i]));
  const rt::MemoryBlock out = memory.allocate(values.size() * 2);
  memory.convert(sum.floats(), rt::DType::BF16, out.data(), values.size());
  memory.load(out.data(), rt::DType::BF16, back);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(back[i] == round_to_bf16(sum.floats()[i]));

  CHECK_THROWS_WITH(memory.store(values, rt::DType::I32, bf16.data()),
                    Catch::Contains("HostKernelMemory::store") && Catch::Contains("int32"));
}
