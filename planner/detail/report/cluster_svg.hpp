// Internal to burst_report: the cluster as a picture, with the plan's rings drawn over it.
//
// Nodes are boxes stacked top to bottom; in each, its GPUs in a row (local index left to
// right, each labelled with the rank it runs), the NVSwitch (or PCIe switches) below them,
// then the NICs; the fabric is a bar on the right that every node's NICs reach. GPUs the plan
// leaves idle are grey. Rings are arrows from each rank to the next in ring order: a flat ring
// in one colour; a double ring's inner rings (within a node) and outer rings (across nodes)
// in two; with Ulysses, each group of ranks that split the heads is shaded and every member's
// ring has its own colour; with tensor parallelism, each group of GPUs that split the layers'
// weights is shaded too, inside its Ulysses group. An arrow to a GPU beside it is a short straight one, to a GPU
// further along the same node an arc above the row, to the next node down a path out through
// the NIC row and the gap between the nodes, and any other (the ring closing back to the top)
// runs along the left margin.
//
// Large clusters stay legible: beyond four nodes only the first three are drawn in full and
// the rest become one box ("... 5 more nodes like these"); an arrow with one end in that box
// is drawn to or from it (class "ring-elided"), and arrows with both ends there are not drawn.
// Elements carry classes the tests count: "gpu" (a GPU that runs a rank), "gpu-idle",
// "ring-flat", "ring-intra", "ring-inter", "ring-elided", "ulysses-group", "tp-group".
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace burst::planner::svg {

[[nodiscard]] std::string cluster_picture(const plan::Plan& plan, bool standalone);

}  // namespace burst::planner::svg
