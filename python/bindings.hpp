// The module's functions, one file per concern; module.cpp adds them all to `burst`.
#pragma once

#include <pybind11/pybind11.h>

namespace burst::python {

void bind_topology(pybind11::module_& m);  // topology(), topology_presets()
void bind_simulate(pybind11::module_& m);  // simulate()
void bind_plan(pybind11::module_& m);      // plan(), explain(), whatif()
void bind_export(pybind11::module_& m);    // export()

}  // namespace burst::python
