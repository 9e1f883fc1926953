// JSON <-> Python objects: the module's plain data. The library answers with the same
// nlohmann::json the CLI prints with --json, and reads the JSON documents (plans, model
// configs) the CLI reads from files; this bridge turns those into dicts, lists, strings,
// ints, floats, bools and None and back, value for value (a double stays the same double).
#pragma once

#include <string>

#include <pybind11/pybind11.h>

#include "common/json_reader.hpp"

namespace burst::python {

[[nodiscard]] pybind11::object to_python(const Json& value);

// Anything else than plain data (a set, an object, a dict with a non-string key) is a
// burst::Error naming `where` ("plan", "plan/job/seq").
[[nodiscard]] Json from_python(const pybind11::handle& value, const std::string& where);

}  // namespace burst::python
