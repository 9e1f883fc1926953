// burst.export(plan, to="megatron"): `burst export`, the plan as a framework's settings. What
// the framework cannot do and what its nearest equivalent costs come as notes: in the text (as
// comments), and as a list with with_notes=True.
#include "planner/export/export.hpp"
#include "python/arguments.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;

namespace burst::python {

void bind_export(py::module_& m) {
  m.def(
      "export",
      [](const py::object& plan, const std::string& to, bool with_notes, bool force, int nemo_version) -> py::object {
        std::string source;
        const plan::Plan read = read_plan_argument(plan, source);
        exporter::Exported exported;
        {
          const py::gil_scoped_release free_python;
          exported = exporter::export_plan(read, source, to, "to", force, nemo_version);
        }
        exporter::throw_if_refused(exported);
        if (!with_notes) return py::str(exported.text);
        py::list notes;
        for (const std::string& note : exported.notes) notes.append(note);
        return py::dict(py::arg("text") = exported.text, py::arg("notes") = notes);
      },
      py::arg("plan"), py::arg("to"), py::arg("with_notes") = false, py::arg("force") = false,
      py::arg("nemo_version") = 2,
      "The plan (a dict from burst.plan() or a file's path) as a framework's settings: megatron, nemo, deepspeed,\n"
      "torchtitan. A str, as `burst export` prints it; with_notes=True: {'text', 'notes'}. A framework whose\n"
      "equivalent of the plan cannot run on its cluster raises burst.Error; force=True writes it anyway, the\n"
      "warning as the first line. nemo_version: NeMo's output, 2 (a Python recipe) or 1 (NeMo 1.0's YAML).");
}

}  // namespace burst::python
