// Masks: parsing and printing, and the closed-form pair counts against token-by-token counting.
#include <catch2/catch.hpp>

#include <random>

#include "brute_force.hpp"
#include "common/error.hpp"

using namespace burst;
using namespace burst::sim;
using namespace burst::sim::testing;

namespace {

std::vector<Mask> masks_to_try() {
  std::vector<Mask> masks = {{MaskKind::Full, 0, 0}, {MaskKind::Causal, 0, 0}};
  for (const std::int64_t w : {1, 2, 3, 7, 16, 50, 1000}) masks.push_back({MaskKind::SlidingWindow, w, 0});
  for (const std::int64_t l : {1, 2, 3, 5, 8, 12, 64, 1000}) masks.push_back({MaskKind::Document, 0, l});
  return masks;
}

// The range of indices whose element meets any allowed partner, token by token: the first and
// last such element of `own` (the queries when `queries`), {0, -1} when none.
IndexRange brute_paired(const Mask& m, const Progression& q, const Progression& k, bool queries) {
  const Progression& own = queries ? q : k;
  const Progression& other = queries ? k : q;
  IndexRange range{0, -1};
  for (std::int64_t i = 0; i < own.count; ++i) {
    bool met = false;
    for (std::int64_t j = 0; j < other.count && !met; ++j) {
      const std::int64_t a = own.start + i * own.stride, b = other.start + j * other.stride;
      met = queries ? allowed(m, a, b) : allowed(m, b, a);
    }
    if (!met) continue;
    if (range.count() == 0) range.first = i;
    range.last = i;
  }
  return range;
}

std::string error_of(std::string_view text) {
  try {
    (void)parse_mask(text, "--mask");
  } catch (const burst::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("parse_mask reads every form and to_string writes it back", "[mask]") {
  CHECK(parse_mask("full", "--mask").kind == MaskKind::Full);
  CHECK(parse_mask("causal", "--mask").kind == MaskKind::Causal);
  const Mask sliding = parse_mask("sliding:4K", "--mask");
  CHECK(sliding.kind == MaskKind::SlidingWindow);
  CHECK(sliding.window == 4096);  // "4K" = 4 x 1024 tokens
  const Mask doc = parse_mask("document:1000", "--mask");
  CHECK(doc.kind == MaskKind::Document);
  CHECK(doc.doc_len == 1000);
  for (const char* text : {"full", "causal", "sliding:4K", "sliding:100", "document:1M", "document:3"}) {
    CHECK(to_string(parse_mask(text, "--mask")) == text);
  }
}

TEST_CASE("parse_mask errors name the field, the valid forms and a hint", "[mask]") {
  const std::string valid = "(valid: full, causal, sliding:W, document:L (W, L in tokens, e.g. sliding:4K); ";
  CHECK(error_of("casual") == "--mask: unknown mask 'casual' " + valid + "hint: did you mean 'causal'?)");
  CHECK(error_of("sliding") ==
        "--mask: 'sliding' needs the window in tokens " + valid + "hint: write it like \"sliding:4K\")");
  CHECK(error_of("document:0") == "--mask: the document length of 'document' must be at least 1 token, got 0 " + valid +
                                      "hint: write it like \"document:4K\")");
  CHECK(error_of("full:2") == "--mask: 'full' takes no parameter, got 'full:2' " + valid + "hint: write \"full\")");
  CHECK(error_of("") == "--mask: empty mask " + valid + "hint: write \"causal\" for a decoder)");
  // A bad token count is reported by the token parser, still naming the field.
  CHECK(error_of("sliding:4Q").rfind("--mask: '4Q'", 0) == 0);
}

TEST_CASE("pair counts of random progressions equal token-by-token counts", "[mask]") {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto masks = masks_to_try();
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t stride = pick(1, 6);
    // Same stride (what layouts produce) most of the time, a different one otherwise.
    const std::int64_t other_stride = trial % 4 == 0 ? pick(1, 6) : stride;
    const Progression q{pick(0, 80), pick(0, 14), stride};
    const Progression k{pick(0, 80), pick(0, 14), other_stride};
    TokenSet qs, ks;
    qs.add(q);
    ks.add(k);
    for (const Mask& m : masks) {
      INFO("q {" << q.start << "," << q.count << "," << q.stride << "} k {" << k.start << "," << k.count << ","
                 << k.stride << "} mask " << to_string(m));
      REQUIRE(allowed_pairs(m, q, k) == brute_pairs(m, tokens_of(qs), tokens_of(ks)));
    }
  }
}

TEST_CASE("the tokens a block's kernel needs are exact for band masks and whole for documents", "[mask]") {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto masks = masks_to_try();
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t stride = pick(1, 6);
    const Progression q{pick(0, 80), pick(0, 14), stride};
    const Progression k{pick(0, 80), pick(0, 14), stride};
    for (const Mask& m : masks) {
      INFO("q {" << q.start << "," << q.count << "} k {" << k.start << "," << k.count << "} stride " << stride
                 << " mask " << to_string(m));
      const PairedTokens got = paired_tokens(m, q, k);
      const IndexRange queries = brute_paired(m, q, k, true), keys = brute_paired(m, q, k, false);
      if (m.kind == MaskKind::Document) {
        // Documents may leave gaps: the whole progressions wherever any pair is allowed.
        REQUIRE(got.queries.count() == (queries.count() > 0 ? q.count : 0));
        REQUIRE(got.keys.count() == (keys.count() > 0 ? k.count : 0));
        continue;
      }
      // Band masks: the paired tokens are consecutive, exactly the brute-force range.
      REQUIRE(got.queries.count() == queries.count());
      REQUIRE(got.keys.count() == keys.count());
      if (queries.count() > 0) {
        REQUIRE(got.queries.first == queries.first);
        REQUIRE(got.queries.last == queries.last);
        REQUIRE(got.keys.first == keys.first);
        REQUIRE(got.keys.last == keys.last);
      }
    }
  }
}

TEST_CASE("pair counts between ring ranks equal token-by-token counts for every layout and mask", "[mask][layout]") {
  const auto masks = masks_to_try();
  for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
    for (const int ring : {1, 2, 3, 4, 6, 8}) {
      const std::int64_t seq = layout_multiple(layout, ring) * (ring <= 4 ? 12 : 5);
      std::vector<TokenSet> sets;
      for (int r = 0; r < ring; ++r) sets.push_back(ring_tokens(layout, seq, ring, r));
      for (const Mask& m : masks) {
        std::int64_t sum = 0;
        for (int q = 0; q < ring; ++q) {
          for (int k = 0; k < ring; ++k) {
            INFO(to_string(layout) << " ring " << ring << " seq " << seq << " " << to_string(m) << " q " << q << " k "
                                   << k);
            const std::int64_t pairs =
                allowed_pairs(m, sets[static_cast<std::size_t>(q)], sets[static_cast<std::size_t>(k)]);
            REQUIRE(pairs == brute_pairs(m, tokens_of(sets[static_cast<std::size_t>(q)]),
                                         tokens_of(sets[static_cast<std::size_t>(k)])));
            sum += pairs;
          }
        }
        // The blocks tile the sequence: their counts add up to the whole mask's.
        REQUIRE(sum == brute_total(m, seq));
      }
    }
  }
}

TEST_CASE("document counts stay exact when documents and strides do not align", "[mask]") {
  // Striped progressions of stride 6 against documents of 4, 9, 10 and 25 tokens: the
  // interior documents repeat with period 6 / gcd(L, 6), which the count exploits.
  for (const std::int64_t len : {4, 9, 10, 25}) {
    const Mask m{MaskKind::Document, 0, len};
    for (int r = 0; r < 6; ++r) {
      for (int s = 0; s < 6; ++s) {
        TokenSet q, k;
        q.add({r, 90, 6});
        k.add({s, 90, 6});
        INFO("L " << len << " r " << r << " s " << s);
        REQUIRE(allowed_pairs(m, q, k) == brute_pairs(m, tokens_of(q), tokens_of(k)));
      }
    }
  }
}

TEST_CASE("closed forms at scale: causal over a 1M-token sequence", "[mask]") {
  // All of a causal sequence of n tokens: n (n + 1) / 2 pairs.
  const std::int64_t n = 1 << 20;
  const Progression all{0, n, 1};
  CHECK(allowed_pairs(Mask{MaskKind::Causal, 0, 0}, all, all) == n * (n + 1) / 2);
  // Sliding window W: sum over q of min(q + 1, W) = W (W + 1) / 2 + (n - W) W.
  const std::int64_t w = 4096;
  CHECK(allowed_pairs(Mask{MaskKind::SlidingWindow, w, 0}, all, all) == w * (w + 1) / 2 + (n - w) * w);
  // Documents of L: n / L documents of L (L + 1) / 2 pairs.
  const std::int64_t len = 8192;
  CHECK(allowed_pairs(Mask{MaskKind::Document, 0, len}, all, all) == n / len * (len * (len + 1) / 2));
}

TEST_CASE("a token set holds at most two progressions", "[mask]") {
  TokenSet s;
  s.add({0, 4, 1});
  s.add({8, 4, 1});
  CHECK(s.tokens() == 8);
  CHECK_THROWS_AS(s.add({16, 4, 1}), std::logic_error);
}
