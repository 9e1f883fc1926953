// From a search result to the plan contract: the chosen strategy with every knob resolved
// (ring sizes, rank placement, ring orders as world ranks), its prediction, and the best
// candidate of every family as alternatives. The chosen family appears among the alternatives
// too, so a reader sees every family side by side.
#pragma once

#include <string>

#include "plan/plan.hpp"
#include "planner/search/search.hpp"

namespace burst::planner {

// Requires result.chosen_plan() (a plan is only made when something fits).
[[nodiscard]] plan::Plan build_plan(const SearchResult& result, const SearchRequest& request,
                                    const topo::Topology& topology);

// The search request that remakes a plan from its own job and budget (default cost models):
// what `burst report` re-plans the scaling table with, and what golden plans are rebuilt from.
[[nodiscard]] SearchRequest replan_request(const plan::Plan& plan);

// The contract's view of one evaluated candidate.
[[nodiscard]] plan::Strategy plan_strategy(const sim::TrainingStrategy& strategy, const topo::Topology& topology);
// And back: the simulator's view of a plan's strategy, to simulate it again (its framework
// memory is burst's: a plan records the knobs, not the allocator).
[[nodiscard]] sim::AttentionStrategy attention_strategy(const plan::Strategy& strategy);
[[nodiscard]] sim::TrainingStrategy training_strategy(const plan::Strategy& strategy);
[[nodiscard]] plan::Prediction plan_prediction(const sim::IterationSimulation& sim);

}  // namespace burst::planner
