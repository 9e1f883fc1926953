// Fitting the communication model to nccl-tests measurements.
//
// A message of s bytes on one link takes t = a + s / b: a fixed latency a and a bandwidth b.
// Over the large-message rows of a table, least squares on t against s gives the slope 1/b,
// hence the bandwidth NCCL really reaches (efficiency = b / raw bandwidth). Collectives need a
// translation first: a ring all-reduce over n ranks moves 2(n-1)/n x size bytes through every
// rank's link in 2(n-1) steps, so we fit t against those "bus bytes" and divide the intercept
// by 2(n-1) to get a per-message latency. Small messages (a few KiB) are pure latency: their
// time divided by the step count is the per-message software latency.
//
// The parsers read the two layouts of the reference files: nccl-tests console output (rows of
// "size count type redop root time algbw busbw #wrong ...", one table per block of rows) and
// the Azure benchmarking guide's Markdown table ("| 1K | 0.04 |": size and bus bandwidth).
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace burst::sim {

struct NcclRow {
  double bytes = 0;
  double time_s = 0;  // out-of-place time (nccl-tests); derived from busbw (Markdown)
  double busbw_Bps = 0;
};
using NcclTable = std::vector<NcclRow>;

// Every block of consecutive nccl-tests result rows, in file order.
[[nodiscard]] std::vector<NcclTable> parse_nccl_tests(std::string_view text);
// The "| size | GB/s |" rows of an all-reduce busbw Markdown table for `ranks` GPUs. Sizes are
// written loosely ("65K", "132K" for 2^16, 2^17), so each is rounded to the nearest power of
// two; times are recovered as size / algbw with algbw = busbw x n / (2(n-1)).
[[nodiscard]] NcclTable parse_busbw_markdown(std::string_view text, int ranks);

struct LatencyBandwidth {
  double latency_s = 0;
  double bandwidth_Bps = 0;
};
// Least squares of t = a + s / b over (bytes, seconds) samples (at least two distinct sizes).
[[nodiscard]] LatencyBandwidth fit_latency_bandwidth(std::span<const double> bytes, std::span<const double> seconds);

// Ring all-reduce over `ranks`: fit rows with bytes >= min_bytes against bus bytes; returns
// the per-rank bus bandwidth and the per-step latency (intercept / 2(n-1)).
[[nodiscard]] LatencyBandwidth fit_ring_allreduce(const NcclTable& table, int ranks, double min_bytes);
// Point-to-point (sendrecv) rows with bytes >= min_bytes: t = a + s / b directly.
[[nodiscard]] LatencyBandwidth fit_point_to_point(const NcclTable& table, double min_bytes);
// Median time of the rows with bytes <= max_bytes divided by the 2(n-1) ring steps.
[[nodiscard]] double small_message_step_latency(const NcclTable& table, int ranks, double max_bytes);

}  // namespace burst::sim
