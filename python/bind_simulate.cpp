// burst.simulate(topology=..., model=..., seq=..., strategy="all", ...): `burst simulate
// --json`, one attention layer (forward + backward) per strategy.
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
        jobs::StrategyOverrides overrides;
        k.text("layout", overrides.layout);
        k.text("backward", overrides.backward);
        k.text("ring", overrides.ring);
        k.count("inner", overrides.inner);
        k.count("ulysses", overrides.ulysses);
        bool overlap = true;
        k.flag("overlap", overlap);
        overrides.no_overlap = !overlap;
        k.finish();
        const jobs::Job job = jobs::resolve_job(job_options);
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
