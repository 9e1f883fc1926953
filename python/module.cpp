// `import burst`: the planner from Python. Plain data in and out (dicts, lists, str, int,
// float), the numbers of the CLI's --json output, and bad input as burst.Error (a ValueError)
// whose message is the lines the CLI prints after "error: ", with .problems holding each
// as a dict (where, what, valid, hint). docs/python.md is the reference.
#include <pybind11/pybind11.h>

#include "common/error.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;

PYBIND11_MODULE(burst, m) {
  m.doc() = "burst: plan and simulate long-sequence transformer training across GPU clusters (docs/python.md)";
  m.attr("__version__") = BURST_VERSION;
  static py::exception<burst::Error> error_type(m, "Error", PyExc_ValueError);
  error_type.attr("__doc__") = "Bad input: every problem at once, one line each (where: what (valid: ...; hint: ...)).";
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const burst::Error& e) {
      py::list problems;
      for (const burst::Problem& p : e.problems()) {
        problems.append(py::dict(py::arg("where") = p.where, py::arg("what") = p.what, py::arg("valid") = p.valid,
                                 py::arg("hint") = p.hint));
      }
      py::object instance = py::handle(error_type.ptr())(e.what());
      instance.attr("problems") = problems;
      PyErr_SetObject(error_type.ptr(), instance.ptr());
    }
  });
  burst::python::bind_topology(m);
  burst::python::bind_simulate(m);
  burst::python::bind_plan(m);
  burst::python::bind_export(m);
}
