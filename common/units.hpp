// Quantities with their units written in the value, as SimGrid platform files do:
// "200GBps", "200Gbps", "25GB/s", "2us", "80GiB", "312TFLOPS", "1M" (tokens).
//
// Internally every quantity is a double in SI base units: bytes per second, seconds, bytes,
// FLOP per second. Decimal prefixes (K, M, G, T, P) are powers of 1000 and binary ones (Ki, Mi,
// Gi, Ti) powers of 1024, except token counts, where "1M" means 2^20 tokens as in the
// long-context literature (1M = 1048576, so it splits evenly across power-of-two rings).
// A lower-case 'b' is bits, an upper-case 'B' is bytes: "200Gbps" is 25e9 bytes per second.
// Parse errors throw burst::Error naming the field, the text and the valid units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace burst::units {

[[nodiscard]] double parse_bandwidth(std::string_view text, std::string_view field);  // bytes/s
[[nodiscard]] double parse_duration(std::string_view text, std::string_view field);   // seconds
[[nodiscard]] double parse_bytes(std::string_view text, std::string_view field);      // bytes
[[nodiscard]] double parse_flop_rate(std::string_view text, std::string_view field);  // FLOP/s
// Token counts: "1048576", "1M", "512K", "2M" (binary prefixes, see above).
[[nodiscard]] std::int64_t parse_tokens(std::string_view text, std::string_view field);

// Shortest exact-enough forms that parse back to the same value (to 6 significant digits):
// 2e11 -> "200GBps", 2e-6 -> "2us", 80*2^30 -> "80GiB", 3.12e14 -> "312TFLOPS", 2^20 -> "1M".
[[nodiscard]] std::string format_bandwidth(double bytes_per_second);
[[nodiscard]] std::string format_duration(double seconds);
[[nodiscard]] std::string format_bytes(double bytes);
[[nodiscard]] std::string format_flop_rate(double flop_per_second);
[[nodiscard]] std::string format_tokens(std::int64_t tokens);

// For people, not for parsing back: "12.34 s", "56.7 ms", "0 s"; "61.5 GiB" (2^30 bytes, what
// nvidia-smi and memory budgets use), scaled down to MiB, KiB and bytes below one of the unit
// ("640.0 MiB", not "0.6 GiB"). A value that is not finite prints "n/a".
[[nodiscard]] std::string human_duration(double seconds);
[[nodiscard]] std::string human_bytes(double bytes);

}  // namespace burst::units
