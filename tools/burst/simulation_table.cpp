#include "tools/burst/simulation_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace burst::cli {
namespace {

std::string ring_text(const sim::AttentionStrategy& s) {
  std::string text = s.ring == sim::RingKind::Double ? fmt::format("double({} inner)", s.inner) : std::string("flat");
  if (s.ulysses > 1) text = fmt::format("U{} x {}", s.ulysses, text);
  return text;
}

double total(const sim::LayerSimulation& r) { return r.forward.time_s + r.backward.time_s; }

double megabytes(double bytes) { return bytes / 1e6; }

}  // namespace

void print_simulation_table(const std::vector<sim::LayerSimulation>& results) {
  std::vector<const sim::LayerSimulation*> rows;
  for (const auto& r : results) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    if (a->not_applicable.empty() != b->not_applicable.empty()) return a->not_applicable.empty();
    return a->not_applicable.empty() && total(*a) < total(*b);
  });
  double best_peer = 0;
  for (const auto* r : rows) {
    if (r->not_applicable.empty() && r->strategy.name.rfind("burst", 0) != 0) {
      best_peer = best_peer == 0 ? total(*r) : std::min(best_peer, total(*r));
    }
  }

  fmt::print("\nOne attention layer, forward + backward (per rank; times in ms, bytes in MB sent per rank)\n");
  fmt::print("{:<24} {:<20} {:<10} {:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9}\n", "strategy", "ring",
             "layout", "bwd", "fwd", "bwd", "total", "exposed", "MB fwd", "MB bwd", "imbal", "vs peer");
  for (const auto* r : rows) {
    const auto& s = r->strategy;
    if (!r->not_applicable.empty()) {
      fmt::print("{:<24} not applicable: {}\n", s.name, r->not_applicable);
      continue;
    }
    const std::string speedup = best_peer > 0 ? fmt::format("{:.2f}x", best_peer / total(*r)) : "-";
    fmt::print("{:<24} {:<20} {:<10} {:<8} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.1f} {:>9.1f} {:>7.3f} {:>9}\n",
               s.name, ring_text(s), sim::to_string(s.layout), sim::to_string(s.backward), r->forward.time_s * 1e3,
               r->backward.time_s * 1e3, total(*r) * 1e3,
               (r->forward.exposed_comm_s + r->backward.exposed_comm_s) * 1e3, megabytes(r->forward.bytes_per_rank),
               megabytes(r->backward.bytes_per_rank), std::max(r->forward.imbalance, r->backward.imbalance), speedup);
  }
  fmt::print(
      "\nexposed: time not hidden behind the busiest rank's compute; imbal: max/mean compute per rank;\n"
      "vs peer: speed of the best non-burst strategy divided by this row's (above 1 = faster).\n");
}

}  // namespace burst::cli
