// The sane ranges of physical quantities (see physical_ranges.hpp).
#include "topologies/detail/physical_ranges.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/units.hpp"

namespace burst::topo {
namespace {

struct Range {
  double low, high;
  std::string (*format)(double);
};

std::string plain(double x) { return fmt::format("{:g}", x); }

Range range_of(Quantity q) {
  switch (q) {
    case Quantity::Bandwidth: return {1e6, 1e14, units::format_bandwidth};
    case Quantity::Latency: return {0, 1, units::format_duration};
    case Quantity::FlopRate: return {1e9, 1e17, units::format_flop_rate};
    case Quantity::Memory: return {1024.0 * 1024.0, 100.0 * 1024 * 1024 * 1024 * 1024, units::format_bytes};
    case Quantity::Oversubscription: return {1, 1000, plain};
  }
  return {0, 0, plain};
}

}  // namespace

void check_range(Problems& problems, const std::string& where, const std::string& what, double value,
                 Quantity quantity) {
  const Range r = range_of(quantity);
  if (!std::isfinite(value) || (value >= r.low && value <= r.high)) return;  // non-finite: the caller's check says so
  problems.add(where, fmt::format("{} {:g} is outside the physical range", what, value),
               fmt::format("{} to {}", r.format(r.low), r.format(r.high)),
               "check the unit and the exponent (a typo, not hardware, gives values like this)");
}

}  // namespace burst::topo
