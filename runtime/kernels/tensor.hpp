// Tensors of the CPU kernels: fp32, row-major, shape [tokens, heads, head_dim].
//
// The row of (token t, head h) starts at data + (t * heads + h) * head_dim, so the rows of one
// head form a strided matrix whose leading dimension is heads * head_dim. BLAS reads such a
// matrix in place (lda = heads * head_dim): a tile of Bq tokens of head h is
// MatRef{row(t0, h), Bq, head_dim, heads * head_dim}, with no per-head copy or transpose.
//
// View / ConstView do not own memory (kernels take them); Tensor owns a zero-filled buffer
// (tests, the benchmark, the runtime's ring buffers). Per-(token, head) scalars such as lse and
// D = rowsum(O * dO) are plain spans of tokens * heads floats, index t * heads + h.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace burst::rt {

// The lse of a row with no allowed key yet (or at all), and the running maximum's start.
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Shape {
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  [[nodiscard]] std::int64_t elements() const { return tokens * heads * head_dim; }
  [[nodiscard]] std::int64_t row_stride() const { return heads * head_dim; }
  friend bool operator==(const Shape&, const Shape&) = default;
};

// A row-major matrix of `rows` x `cols` whose rows are `ld` floats apart.
template <typename T>
struct BasicMatRef {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
};
using MatRef = BasicMatRef<float>;
using ConstMatRef = BasicMatRef<const float>;

template <typename T>
struct BasicView {
  T* data = nullptr;
  Shape shape;

  [[nodiscard]] T* row(std::int64_t token, std::int64_t head) const {
    return data + (token * shape.heads + head) * shape.head_dim;
  }
  // Tokens [first, first + count) of one head, as a strided matrix [count, head_dim].
  [[nodiscard]] BasicMatRef<T> head_rows(std::int64_t head, std::int64_t first, std::int64_t count) const {
    return {row(first, head), count, shape.head_dim, shape.row_stride()};
  }
  operator BasicView<const T>() const  // NOLINT(google-explicit-constructor): View -> ConstView
      requires(!std::is_const_v<T>) {
    return {data, shape};
  }
};
using View = BasicView<float>;
using ConstView = BasicView<const float>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape) : shape_(shape), data_(static_cast<std::size_t>(shape.elements()), 0.0f) {}

  [[nodiscard]] const Shape& shape() const { return shape_; }
  [[nodiscard]] View view() { return {data_.data(), shape_}; }
  [[nodiscard]] ConstView view() const { return {data_.data(), shape_}; }
  [[nodiscard]] std::span<float> values() { return data_; }
  [[nodiscard]] std::span<const float> values() const { return data_; }
  // Gives the buffer away (the tensor is left empty): for callers that keep a kernel's output.
  [[nodiscard]] std::vector<float> take() && { return std::move(data_); }

 private:
  Shape shape_;
  std::vector<float> data_;
};

}  // namespace burst::rt
