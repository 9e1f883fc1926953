// What a message carries: a run of elements of one dtype, counted in bytes on the wire.
//
// The communicator moves typed buffers, not floats: fp32 and bf16 tensors, fp64 figures,
// integer counts and ids, raw bytes. A buffer is (pointer, element count, dtype); its bytes
// are count x dtype_size. Matching a receive to a send checks both the dtype and the count, so
// a bf16 block never lands in an fp32 inbox, and the byte counters count what crosses the wire
// (2 bytes per bf16 element), which is what the simulator prices.
//
// Build one from a span or vector of a supported element type: ConstBuffer(std::span<const
// float>), MutBuffer(std::vector<Bf16>&), ... (dtype_of<T> names the dtype of each element type).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/bf16.hpp"

namespace burst::rt {

enum class DType : std::uint8_t { F32, F64, BF16, I32, I64, U64, Bytes };

[[nodiscard]] constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64:
    case DType::U64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::BF16: return 2;
    case DType::Bytes: return 1;
  }
  return 1;
}

// "fp32", "fp64", "bf16", "int32", "int64", "uint64", "bytes".
[[nodiscard]] std::string_view to_string(DType t);

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};
template <>
struct DTypeOf<Bf16> {
  static constexpr DType value = DType::BF16;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct DTypeOf<std::uint64_t> {
  static constexpr DType value = DType::U64;
};
template <>
struct DTypeOf<std::byte> {
  static constexpr DType value = DType::Bytes;
};

template <class T>
concept Element = requires {
  DTypeOf<std::remove_const_t<T>>::value;
};

template <Element T>
inline constexpr DType dtype_of = DTypeOf<std::remove_const_t<T>>::value;

// A read-only run of `count` elements of `dtype` (what a send or a collective's input is).
struct ConstBuffer {
  const void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::F32;

  ConstBuffer() = default;
  ConstBuffer(const void* d, std::size_t n, DType t) : data(d), count(n), dtype(t) {}
  template <Element T>
  // NOLINTNEXTLINE(google-explicit-constructor): implicit by design: a typed span is a buffer
  ConstBuffer(std::span<T> s) : data(s.data()), count(s.size()), dtype(dtype_of<T>) {}
  template <Element T>
  // NOLINTNEXTLINE(google-explicit-constructor): implicit by design
  ConstBuffer(const std::vector<T>& v) : ConstBuffer(std::span<const T>(v)) {}

  [[nodiscard]] std::size_t bytes() const { return count * dtype_size(dtype); }
};

// A writable run (a receive, a collective's output).
struct MutBuffer {
  void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::F32;

  MutBuffer() = default;
  MutBuffer(void* d, std::size_t n, DType t) : data(d), count(n), dtype(t) {}
  template <Element T>
  // NOLINTNEXTLINE(google-explicit-constructor): implicit by design: a typed span is a buffer
  requires(!std::is_const_v<T>) MutBuffer(std::span<T> s) : data(s.data()), count(s.size()), dtype(dtype_of<T>) {}
  template <Element T>
  // NOLINTNEXTLINE(google-explicit-constructor): implicit by design
  MutBuffer(std::vector<T>& v) : MutBuffer(std::span<T>(v)) {}

  [[nodiscard]] std::size_t bytes() const { return count * dtype_size(dtype); }
  // NOLINTNEXTLINE(google-explicit-constructor): implicit by design
  [[nodiscard]] operator ConstBuffer() const {
    return {data, count, dtype};
  }  // NOLINT(google-explicit-constructor): a writable run is readable
};

}  // namespace burst::rt
