// Internal to burst_report: one attention layer's predicted timeline on a few ranks.
//
// Each rank gets two lanes: its compute tasks (attention blocks, blue) and its sends (orange;
// several may be in flight at once). Where a rank's compute lane is empty before its phase
// ends, the rank is waiting on data: that exposed time is shaded in vermillion, so a reader
// sees at a glance whether the ring's transfers hide behind compute. The forward comes first,
// the backward after it, split by a dashed line; the time axis is in ms or us. Groups carry
// the classes the tests count: "timeline-rank", "compute", "send", "exposed".
#pragma once

#include <string>

#include "planner/report/report.hpp"

namespace burst::planner::svg {

[[nodiscard]] std::string timeline_picture(const Timeline& timeline, bool standalone);

}  // namespace burst::planner::svg
