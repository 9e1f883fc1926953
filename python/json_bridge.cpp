#include "python/json_bridge.hpp"

#include <cstdint>

#include "common/error.hpp"

namespace py = pybind11;

namespace burst::python {

py::object to_python(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(value.get<bool>());
    case Json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case Json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case Json::value_t::number_float: return py::float_(value.get<double>());
    case Json::value_t::string: return py::str(value.get_ref<const std::string&>());
    case Json::value_t::array: {
      py::list list;
      for (const Json& item : value) list.append(to_python(item));
      return list;
    }
    case Json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  return py::none();
}

Json from_python(const py::handle& value, const std::string& where) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw Error(Problem{where, "integer out of range", "a whole number of 64 bits", ""});
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    Json array = Json::array();
    std::size_t i = 0;
    for (const py::handle item : value) array.push_back(from_python(item, where + "/" + std::to_string(i++)));
    return array;
  }
  if (py::isinstance<py::dict>(value)) {
    Json object = Json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) {
        throw Error(
            Problem{where, "a key that is not a string: " + py::repr(key).cast<std::string>(), "string keys", ""});
      }
      const std::string name = key.cast<std::string>();
      object[name] = from_python(item, where + "/" + name);
    }
    return object;
  }
  throw Error(Problem{where, "a " + py::type::of(value).attr("__name__").cast<std::string>() + " is not plain data",
                      "dict, list, tuple, str, int, float, bool or None", ""});
}

}  // namespace burst::python
