// Layouts as token progressions, and exact pair counting (see token_sets.hpp for the diagonal trick).
#include "common/token_sets.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace burst {
namespace {

// Floor and ceiling of n / d for d > 0 and any sign of n.
std::int64_t floor_div(std::int64_t n, std::int64_t d) {
  const std::int64_t q = n / d;
  return (n % d != 0 && n < 0) ? q - 1 : q;
}
std::int64_t ceil_div(std::int64_t n, std::int64_t d) { return -floor_div(-n, d); }

// sum over t <= x of N(t), N(t) = max(0, min(n, m, n - t, m + t)): the number of (i, j) of an
// n x m grid with i - j <= x. N rises 1..p-1 from t = 1-m, stays at p = min(n, m) on
// [p - m, n - p], then falls to 1 at t = n - 1.
std::int64_t diagonal_prefix(std::int64_t n, std::int64_t m, std::int64_t x) {
  if (x <= -m) return 0;
  if (x >= n - 1) return n * m;
  const std::int64_t p = std::min(n, m);
  if (x < p - m) {
    const std::int64_t y = x + m;  // N(t) = m + t, summed for t = 1-m .. x
    return y * (y + 1) / 2;
  }
  if (x <= n - p) return p * (p - 1) / 2 + (x - (p - m) + 1) * p;
  const std::int64_t tail = n - x - 1;  // N(t) = n - t for t = x+1 .. n-1: 1 .. tail
  return n * m - tail * (tail + 1) / 2;
}

// (i, j) in [0, n) x [0, m) with t0 <= i - j <= t1, for 1 - m <= t0 and t1 <= n - 1.
std::int64_t diagonal_pairs(std::int64_t n, std::int64_t m, std::int64_t t0, std::int64_t t1) {
  if (t0 > t1) return 0;
  return diagonal_prefix(n, m, t1) - diagonal_prefix(n, m, t0 - 1);
}

// Bounds lo <= q - k <= hi of a band mask; -kUnbounded / kUnbounded: no bound on that side.
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max();
struct Band {
  std::int64_t lo;  // -kUnbounded: none
  std::int64_t hi;  // kUnbounded: none
};

// The diagonals t = i - j (query i, key j) of two same-stride progressions on which
// lo <= q - k <= hi, clipped to those of the count(q) x count(k) grid: [t0, t1], none if t0 > t1.
struct Diagonals {
  std::int64_t t0;
  std::int64_t t1;
};
Diagonals band_diagonals(const Progression& q, const Progression& k, std::int64_t stride, Band band) {
  const std::int64_t d = q.start - k.start;  // q - k = d + t * stride
  const std::int64_t t0 = band.lo == -kUnbounded ? 1 - k.count : ceil_div(band.lo - d, stride);
  const std::int64_t t1 = band.hi == kUnbounded ? q.count - 1 : floor_div(band.hi - d, stride);
  return {std::max(t0, 1 - k.count), std::min(t1, q.count - 1)};
}

// Pairs of two same-stride progressions with lo <= q - k <= hi.
std::int64_t band_pairs(const Progression& q, const Progression& k, std::int64_t stride, Band band) {
  if (q.count <= 0 || k.count <= 0) return 0;
  const Diagonals t = band_diagonals(q, k, stride, band);
  return diagonal_pairs(q.count, k.count, t.t0, t.t1);
}

// The elements of p inside [lo, hi], as a progression of the same stride.
Progression clip(const Progression& p, std::int64_t lo, std::int64_t hi) {
  const std::int64_t first = std::max<std::int64_t>(0, ceil_div(lo - p.start, p.stride));
  const std::int64_t last = std::min(p.count - 1, floor_div(hi - p.start, p.stride));
  if (last < first) return {p.start, 0, p.stride};
  return {p.start + first * p.stride, last - first + 1, p.stride};
}

// Document mask for same-stride progressions: causal pairs inside each document of L tokens.
std::int64_t document_pairs(const Progression& q, const Progression& k, std::int64_t stride, std::int64_t len) {
  if (q.count <= 0 || k.count <= 0) return 0;
  const std::int64_t q_last = q.start + (q.count - 1) * stride;
  const std::int64_t k_last = k.start + (k.count - 1) * stride;
  const std::int64_t d_lo = std::max(q.start, k.start) / len;
  const std::int64_t d_hi = std::min(q_last, k_last) / len;
  if (d_lo > d_hi) return 0;
  const auto in_doc = [&](std::int64_t doc) {
    const std::int64_t lo = doc * len, hi = lo + len - 1;
    return band_pairs(clip(q, lo, hi), clip(k, lo, hi), stride, {0, kUnbounded});
  };
  // Interior documents lie inside both progressions' spans [start, start + count * stride),
  // so each piece is "every token of the document congruent to start mod stride".
  const std::int64_t span_lo = std::max(q.start, k.start);
  const std::int64_t span_hi = std::min(q.start + q.count * stride, k.start + k.count * stride);
  const std::int64_t i_lo = std::max(d_lo, ceil_div(span_lo, len));
  const std::int64_t i_hi = std::min(d_hi, floor_div(span_hi, len) - 1);
  std::int64_t total = 0;
  if (i_lo > i_hi) {
    for (std::int64_t doc = d_lo; doc <= d_hi; ++doc) total += in_doc(doc);  // at most 3 documents
    return total;
  }
  for (std::int64_t doc = d_lo; doc < i_lo; ++doc) total += in_doc(doc);
  for (std::int64_t doc = i_hi + 1; doc <= d_hi; ++doc) total += in_doc(doc);
  const std::int64_t interior = i_hi - i_lo + 1;
  const std::int64_t period = stride / std::gcd(len, stride);
  const std::int64_t counted = std::min(interior, period);
  const std::int64_t remainder = interior % period;
  std::int64_t one_period = 0, head = 0;
  for (std::int64_t x = 0; x < counted; ++x) {
    if (x == remainder) head = one_period;
    one_period += in_doc(i_lo + x);
  }
  if (interior < period) return total + one_period;
  return total + (interior / period) * one_period + head;
}

// Keys of k a single query q may see: [lo, hi] (inclusive), by mask.
Band keys_of_query(const Mask& mask, std::int64_t q) {
  switch (mask.kind) {
    case MaskKind::Full: return {-kUnbounded, kUnbounded};
    case MaskKind::Causal: return {-kUnbounded, q};
    case MaskKind::SlidingWindow: return {q - mask.window + 1, q};
    case MaskKind::Document: return {(q / mask.doc_len) * mask.doc_len, q};
  }
  return {0, -1};
}
// Queries that may see a single key k.
Band queries_of_key(const Mask& mask, std::int64_t k) {
  switch (mask.kind) {
    case MaskKind::Full: return {-kUnbounded, kUnbounded};
    case MaskKind::Causal: return {k, kUnbounded};
    case MaskKind::SlidingWindow: return {k, k + mask.window - 1};
    case MaskKind::Document: return {k, (k / mask.doc_len + 1) * mask.doc_len - 1};
  }
  return {0, -1};
}

std::int64_t count_in(const Progression& p, Band band) {
  const std::int64_t lo = band.lo == -kUnbounded ? p.start : band.lo;
  const std::int64_t hi = band.hi == kUnbounded ? p.start + (p.count - 1) * p.stride : band.hi;
  return clip(p, lo, hi).count;
}

// Different strides: one O(1) count per element of the shorter progression.
std::int64_t mixed_stride_pairs(const Mask& mask, const Progression& q, const Progression& k) {
  std::int64_t total = 0;
  if (q.count <= k.count) {
    for (std::int64_t i = 0; i < q.count; ++i) total += count_in(k, keys_of_query(mask, q.start + i * q.stride));
  } else {
    for (std::int64_t j = 0; j < k.count; ++j) total += count_in(q, queries_of_key(mask, k.start + j * k.stride));
  }
  return total;
}

// The stride two progressions share (a single element has none of its own and takes the
// other's), or 0 when they step differently.
std::int64_t common_stride(const Progression& q, const Progression& k) {
  if (q.count == 1) return k.stride;
  if (k.count == 1 || k.stride == q.stride) return q.stride;
  return 0;
}

// The mask as bounds on q - k; the document mask is no band.
Band band_of(const Mask& mask) {
  switch (mask.kind) {
    case MaskKind::Causal: return {0, kUnbounded};
    case MaskKind::SlidingWindow: return {0, mask.window - 1};
    case MaskKind::Full:
    case MaskKind::Document: break;
  }
  return {-kUnbounded, kUnbounded};
}

}  // namespace

void TokenSet::add(const Progression& p) {
  if (size >= static_cast<int>(parts.size())) throw std::logic_error("TokenSet: more than two progressions");
  parts[static_cast<std::size_t>(size++)] = p;
}

std::int64_t TokenSet::tokens() const {
  std::int64_t total = 0;
  for (int i = 0; i < size; ++i) total += parts[static_cast<std::size_t>(i)].count;
  return total;
}

std::int64_t allowed_pairs(const Mask& mask, const Progression& q, const Progression& k) {
  if (q.count <= 0 || k.count <= 0) return 0;
  if (mask.kind == MaskKind::Full) return q.count * k.count;
  const std::int64_t stride = common_stride(q, k);
  if (stride == 0) return mixed_stride_pairs(mask, q, k);
  const Progression qs{q.start, q.count, stride}, ks{k.start, k.count, stride};
  if (mask.kind == MaskKind::Document) return document_pairs(qs, ks, stride, mask.doc_len);
  return band_pairs(qs, ks, stride, band_of(mask));
}

PairedTokens paired_tokens(const Mask& mask, const Progression& q, const Progression& k) {
  const std::int64_t stride = common_stride(q, k);
  if (mask.kind == MaskKind::Document || stride == 0) {
    if (allowed_pairs(mask, q, k) == 0) return {};
    return {{0, q.count - 1}, {0, k.count - 1}};
  }
  if (q.count <= 0 || k.count <= 0) return {};
  const Diagonals t = band_diagonals(q, k, stride, band_of(mask));
  if (t.t0 > t.t1) return {};
  return {{std::max<std::int64_t>(0, t.t0), std::min(q.count - 1, k.count - 1 + t.t1)},
          {std::max<std::int64_t>(0, -t.t1), std::min(k.count - 1, q.count - 1 - t.t0)}};
}

std::int64_t allowed_pairs(const Mask& mask, const TokenSet& q, const TokenSet& k) {
  std::int64_t total = 0;
  for (int i = 0; i < q.size; ++i) {
    for (int j = 0; j < k.size; ++j) {
      total += allowed_pairs(mask, q.parts[static_cast<std::size_t>(i)], k.parts[static_cast<std::size_t>(j)]);
    }
  }
  return total;
}

std::int64_t layout_multiple(Layout layout, int ring_size) {
  return layout == Layout::Zigzag ? 2 * std::int64_t{ring_size} : std::int64_t{ring_size};
}

TokenSet ring_tokens(Layout layout, std::int64_t seq, int ring_size, int rank) {
  TokenSet set;
  const std::int64_t r = rank, n = ring_size;
  switch (layout) {
    case Layout::Contiguous: {
      const std::int64_t c = seq / n;
      set.add({r * c, c, 1});
      break;
    }
    case Layout::Zigzag: {
      const std::int64_t k = seq / (2 * n);
      set.add({r * k, k, 1});
      set.add({(2 * n - 1 - r) * k, k, 1});
      break;
    }
    case Layout::Striped: set.add({r, seq / n, n}); break;
  }
  return set;
}

}  // namespace burst
