// burst.simulate(topology=..., model=..., seq=..., strategy="all", ...): `burst simulate
// --json`, one attention layer (forward + backward) per strategy.
#include <optional>

#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"
#include "python/arguments.hpp"
#include "python/bindings.hpp"
#include "python/json_bridge.hpp"
#include "simulator/engine/engine.hpp"
#include "tools/jobs/simulation.hpp"

namespace py = pybind11;

namespace burst::python {

void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const py::kwargs& kwargs) {
        Keywords k(kwargs);
        jobs::JobOptions job_options;
        read_job(k, job_options);
        std::string strategy = "all";
        std::vector<std::string> strategies = sim::family_names();
        strategies.push_back("all");
        k.choice("strategy", strategy, strategies);
        std::string engine = "event";
        k.choice("engine", engine, sim::engine_names());
        std::optional<std::string> layout, backward, ring;
        k.text("layout", layout);
        k.text("backward", backward);
        k.text("ring", ring);
        AttentionKnobOverrides overrides;
        k.count("inner", overrides.inner);
        k.count("ulysses", overrides.ulysses);
        bool overlap = true;
        k.flag("overlap", overlap);
        if (!overlap) overrides.overlap = false;
        k.finish();
        const jobs::Job job = jobs::resolve_job(job_options);
        // parsed after the job, with the CLI's names, so errors come in the CLI's order and words
        if (layout) overrides.layout = parse_layout(*layout, "--layout");
        if (backward) overrides.backward = parse_backward_mode(*backward, "--backward");
        if (ring) overrides.ring = parse_ring_kind(*ring, "--ring");
        std::vector<sim::LayerSimulation> results;
        {
          const py::gil_scoped_release free_python;
          results = jobs::simulate_strategies(job, jobs::strategies_to_simulate(strategy), overrides, engine, false);
        }
        return to_python(jobs::simulation_json(job, engine, results));
      },
      "One attention layer per strategy, as `burst simulate --json` prints it.\n"
      "Keywords: topology, model, seq (required); nodes, per_node, vocab, batch, mask, dtype, compute_model,\n"
      "comm_model, calibration, strategy ('all'), engine, layout, backward, ring, inner, ulysses, overlap.");
}

}  // namespace burst::python
