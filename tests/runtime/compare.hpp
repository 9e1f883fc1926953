// Element-wise comparison of kernel output (fp32) with the double reference: one check per
// array that reports the worst element. Equal infinities (lse = -inf of a row with no allowed
// key) count as equal; otherwise |got - want| <= tol * max(1, |want|).
#pragma once

#include <cmath>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace burst::test {

struct Mismatch {
  std::size_t count = 0;
  std::size_t worst_index = 0;
  double worst_error = 0;
  double got = 0, want = 0;
};

template <typename A, typename B>
Mismatch compare(std::span<A> got, std::span<B> want, double tol) {
  Mismatch m;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (g == w) continue;
    const double err = std::isinf(w) || std::isinf(g) ? INFINITY : std::abs(g - w) / std::max(1.0, std::abs(w));
    if (!(err <= tol)) ++m.count;
    if (!(err <= m.worst_error)) m = {m.count, i, err, g, w};
  }
  return m;
}

inline std::string describe(const Mismatch& m) {
  std::ostringstream s;
  s << m.count << " elements off; worst at " << m.worst_index << ": got " << m.got << ", want " << m.want;
  return s.str();
}

// CHECK that `got` matches `want` within `tol`, naming the array in the message.
#define CHECK_CLOSE(got, want, tol)                                                      \
  do {                                                                                   \
    const auto mismatch_ = ::burst::test::compare(std::span(got), std::span(want), tol); \
    INFO(#got << ": " << ::burst::test::describe(mismatch_));                            \
    CHECK(mismatch_.count == 0);                                                         \
  } while (false)

}  // namespace burst::test
