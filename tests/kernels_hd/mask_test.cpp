// hd::attends and hd::allowed_keys against the masks' definitions written out independently,
// for every base mask, with and without a block-sparse table, over all position pairs.
#include <catch2/catch.hpp>

#include <functional>

#include "runtime/kernels/attention_mask.hpp"
#include "runtime/kernels/hd/mask.hpp"
#include "tests/kernels_hd/shared_cases.hpp"

using namespace burst;
using rt::hd::attends;

namespace {

using Definition = std::function<bool(std::int64_t q, std::int64_t k)>;

struct PredicateCase {
  const char* name;
  rt::AttentionMask mask;
  Definition definition;
};

std::vector<PredicateCase> predicate_cases() {
  return {
      {"full", {Mask{MaskKind::Full}, {}}, [](std::int64_t, std::int64_t) { return true; }},
      {"causal", {Mask{MaskKind::Causal}, {}}, [](std::int64_t q, std::int64_t k) { return k <= q; }},
      {"sliding:1", {Mask{MaskKind::SlidingWindow, 1}, {}}, [](std::int64_t q, std::int64_t k) { return k == q; }},
      {"sliding:9",
       {Mask{MaskKind::SlidingWindow, 9}, {}},
       [](std::int64_t q, std::int64_t k) { return k <= q && q - k < 9; }},
      {"document:1", {Mask{MaskKind::Document, 0, 1}, {}}, [](std::int64_t q, std::int64_t k) { return k == q; }},
      {"document:13",
       {Mask{MaskKind::Document, 0, 13}, {}},
       [](std::int64_t q, std::int64_t k) { return k <= q && q / 13 == k / 13; }},
      {"causal + band",
       {Mask{MaskKind::Causal}, rt::BlockSparse::from(5, 40, test::block_band)},
       [](std::int64_t q, std::int64_t k) { return k <= q && test::block_band(q / 5, k / 5); }},
      {"full + band",
       {Mask{MaskKind::Full}, rt::BlockSparse::from(5, 40, test::block_band)},
       [](std::int64_t q, std::int64_t k) { return test::block_band(q / 5, k / 5); }},
      {"sliding:20 + band",
       {Mask{MaskKind::SlidingWindow, 20}, rt::BlockSparse::from(5, 40, test::block_band)},
       [](std::int64_t q, std::int64_t k) { return k <= q && q - k < 20 && test::block_band(q / 5, k / 5); }},
  };
}

}  // namespace

TEST_CASE("the shared predicate is each mask's definition") {
  for (const PredicateCase& c : predicate_cases()) {
    INFO("mask " << c.name);
    const rt::hd::MaskView view = rt::view_of(c.mask);
    std::int64_t wrong = 0;
    for (std::int64_t q = 0; q < 200; ++q) {
      for (std::int64_t k = 0; k < 200; ++k) wrong += attends(view, q, k) != c.definition(q, k) ? 1 : 0;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("a query's allowed keys under a base mask are exactly its interval") {
  for (const PredicateCase& c : predicate_cases()) {
    if (c.mask.sparse) continue;
    INFO("mask " << c.name);
    const rt::hd::MaskView view = rt::view_of(c.mask);
    for (std::int64_t q = 0; q < 100; ++q) {
      const rt::hd::KeyInterval keys = rt::hd::allowed_keys(view, q);
      CHECK(keys.lo >= 0);
      for (std::int64_t k = 0; k < 300; ++k) CHECK(keys.contains(k) == c.definition(q, k));
    }
  }
}

TEST_CASE("padding position -1 is never allowed") {
  for (const PredicateCase& c : predicate_cases()) {
    INFO("mask " << c.name);
    const rt::hd::MaskView view = rt::view_of(c.mask);
    for (std::int64_t q = 0; q < 100; ++q) CHECK_FALSE(rt::hd::allowed_keys(view, q).contains(-1));
  }
}

TEST_CASE("the CPU kernels' additive mask is the shared predicate") {
  const std::vector<std::int64_t> q{0, 3, 7, 12, 19, 25, 31, 44};
  const std::vector<std::int64_t> k{44, 1, 2, 13, 19, 20, 30, 31, 5};
  for (const PredicateCase& c : predicate_cases()) {
    INFO("mask " << c.name);
    std::vector<float> s(q.size() * k.size(), 1.0f);
    const std::int64_t allowed = rt::fill_additive_mask(c.mask, q, k, s.data(), static_cast<std::int64_t>(k.size()));
    std::int64_t want = 0;
    for (std::size_t r = 0; r < q.size(); ++r) {
      for (std::size_t j = 0; j < k.size(); ++j) {
        const bool ok = c.definition(q[r], k[j]);
        want += ok ? 1 : 0;
        CHECK(s[r * k.size() + j] == (ok ? 0.0f : -std::numeric_limits<float>::infinity()));
      }
    }
    CHECK(allowed == want);
  }
}
