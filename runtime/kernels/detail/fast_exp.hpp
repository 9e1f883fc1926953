// exp(x) for the softmax, in a form the compiler vectorises (no libm call in the loop).
//
// exp(x) = 2^n * exp(r) with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2]; ln 2 is
// split in two (Cody-Waite) so r stays exact, exp(r) is Cephes' degree-7 polynomial (relative
// error about 1e-7, the fp32 rounding), and 2^n is built in the exponent bits. Inputs below
// -87.3 (including -inf from masked scores) give exactly 0; the softmax never passes inputs
// above 0 (scores minus their running maximum); NaN (a diverged run's scores) stays NaN.
#pragma once

#include <bit>
#include <cstdint>

// Loops around fast_exp are worth a wider vector unit than the baseline x86-64 build targets:
// functions marked BURST_VECTOR_CLONES are compiled twice, for x86-64-v3 (AVX2 + FMA) and the
// baseline, and the loader picks the one the CPU runs (GCC/Clang target_clones; a no-op
// elsewhere). Measured on the softmax of the forward: 20-35% faster forward. Not under
// ThreadSanitizer: the loader runs the clones' resolver before TSan's runtime is up, and the
// instrumented resolver crashes there (the tsan preset's tree).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BURST_NO_VECTOR_CLONES
#endif
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(BURST_NO_VECTOR_CLONES)
#define BURST_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BURST_VECTOR_CLONES
#endif

namespace burst::rt {

inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Value selects, not std::min/max (which return references and keep loops from vectorising),
  // written so that NaN, for which every comparison is false, selects a bound: the conversion
  // to an integer below must see a number. A NaN input comes back as it went in.
  const float lo = x >= -87.0f ? x : -87.0f;
  const float xc = lo <= 88.0f ? lo : 88.0f;
  const float n = (xc * kLog2e + kRound) - kRound;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float two_n = std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
  const float e = p * two_n;
  return x < -87.0f ? 0.0f : (x == x ? e : x);  // x != x: NaN
}

}  // namespace burst::rt
