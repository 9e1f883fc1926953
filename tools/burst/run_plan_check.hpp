// What `burst run` and `burst bench training` check of a plan before they run it, beyond what
// reading it checks (plan): the parts a runtime would otherwise ignore silently.
//
// The runtime executes a plan's knobs, not its family's name, and it never needs the cluster
// the plan was made for. So a plan whose /strategy/name is no family ("warp-drive"), whose
// /cluster is no topology (a cluster without links) or not the one /meta/topology_hash names
// (edited after planning), or whose ranks sit on nodes or GPUs its cluster lacks, would run as
// if nothing were wrong. Each is refused here, with the plan's file and JSON pointer.
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace burst::cli {

// Throws burst::Error naming the field (`path`:/pointer) when the plan is not one its cluster
// and the strategy families vouch for: its family unknown, /cluster not a burst.topology/1
// document, /meta/topology_hash not that document's hash (Topology::hash(), as the planner
// wrote it), or a rank's node or local GPU beyond the cluster's.
void check_plan_cluster(const plan::Plan& plan, const std::string& path);

}  // namespace burst::cli
