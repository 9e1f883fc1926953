// burst.topology(name_or_path, nodes=..., ...): `burst topo show --json`; and
// burst.topology_presets(): `burst topo list` as [{"name", "description"}].
#include "python/arguments.hpp"
#include "python/bindings.hpp"
#include "python/json_bridge.hpp"
#include "tools/jobs/topology_source.hpp"
#include "topologies/presets.hpp"

namespace py = pybind11;

namespace burst::python {

void bind_topology(py::module_& m) {
  m.def(
      "topology",
      [](const std::string& topology, const py::kwargs& kwargs) {
        Keywords k(kwargs);
        jobs::TopologySource source;
        source.topology = topology;
        read_topology_source(k, source);
        k.finish();
        return to_python(jobs::load_topology_source(source).summary_json());
      },
      py::arg("topology"),
      "The summary of a preset, our JSON or an NCCL XML dump, as `burst topo show --json` prints it.\n"
      "Keywords: nodes, per_node, nvlink_from, gpu_from, nic_speed.");
  m.def(
      "topology_presets",
      [] {
        py::list list;
        for (const auto& p : topo::presets())
          list.append(py::dict(py::arg("name") = p.name, py::arg("description") = p.description));
        return list;
      },
      "The topology presets, as `burst topo list` lists them: [{'name', 'description'}].");
}

}  // namespace burst::python
