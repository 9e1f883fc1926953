// The host reductions in rank order (reduce_in_order.hpp).
#include "runtime/comm/detail/reduce_in_order.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/bf16.hpp"

namespace burst::rt::detail {
namespace {

// Elements of T read and written bytewise: the blocks are received byte vectors, unaligned for T.
template <class T>
T load(const std::byte* block, std::size_t i) {
  T value;
  std::memcpy(&value, block + i * sizeof(T), sizeof(T));
  return value;
}

// Accumulates in Acc (T itself, or fp32 for bf16) and stores T once.
template <class T, class Acc, class Widen, class Narrow>
void reduce_as(ReduceOp op, std::span<const std::byte* const> blocks, std::size_t count, std::byte* out, Widen widen,
               Narrow narrow) {
  std::vector<Acc> acc(count);
  for (std::size_t i = 0; i < count; ++i) acc[i] = widen(load<T>(blocks.front(), i));
  for (std::size_t b = 1; b < blocks.size(); ++b) {
    for (std::size_t i = 0; i < count; ++i) {
      const Acc x = widen(load<T>(blocks[b], i));
      acc[i] = op == ReduceOp::Sum ? static_cast<Acc>(acc[i] + x) : std::max(acc[i], x);
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const T value = narrow(acc[i]);
    std::memcpy(out + i * sizeof(T), &value, sizeof(T));
  }
}

template <class T>
void reduce_as(ReduceOp op, std::span<const std::byte* const> blocks, std::size_t count, std::byte* out) {
  const auto same = [](T x) { return x; };
  reduce_as<T, T>(op, blocks, count, out, same, same);
}

}  // namespace

void reduce_in_order(DType dtype, ReduceOp op, std::span<const std::byte* const> blocks, std::size_t count,
                     std::byte* out) {
  if (blocks.empty() || count == 0) return;
  switch (dtype) {
    case DType::F32: return reduce_as<float>(op, blocks, count, out);
    case DType::F64: return reduce_as<double>(op, blocks, count, out);
    case DType::I32: return reduce_as<std::int32_t>(op, blocks, count, out);
    case DType::I64: return reduce_as<std::int64_t>(op, blocks, count, out);
    case DType::U64: return reduce_as<std::uint64_t>(op, blocks, count, out);
    case DType::BF16:
      return reduce_as<Bf16, float>(
          op, blocks, count, out, [](Bf16 x) { return to_float(x); }, [](float x) { return to_bf16(x); });
    case DType::Bytes: break;  // refused by Communicator::check_collective before posting
  }
}

}  // namespace burst::rt::detail
