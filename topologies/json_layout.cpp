// The layout of the JSON files we write: indented like dump(2), except that an object or array
// holding only scalars, when short, stays on one line. A topology then reads one device or link
// per line, and a golden diff shows exactly the link that changed.
#include "topologies/json_format.hpp"

namespace burst::topo {
namespace {

constexpr std::size_t kMaxInline = 150;  // characters of compact JSON kept on one line

bool is_flat(const Json& v) {
  for (const auto& item : v) {
    if (item.is_structured()) return false;
  }
  return v.dump().size() <= kMaxInline;
}

// {"a": 1, "b": "x"} or [1, 2]: compact, with a space after each separator.
std::string inline_text(const Json& v) {
  if (!v.is_structured()) return v.dump();
  std::string out = v.is_object() ? "{" : "[";
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it != v.begin()) out += ", ";
    if (v.is_object()) out += Json(it.key()).dump() + ": ";
    out += it->dump();
  }
  out += v.is_object() ? '}' : ']';
  return out;
}

void dump_readable(const Json& v, std::size_t indent, std::string& out) {
  if (!v.is_structured() || v.empty() || (indent > 0 && is_flat(v))) {
    out += inline_text(v);
    return;
  }
  const std::string inner(indent + 2, ' ');
  out += v.is_object() ? "{\n" : "[\n";
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it != v.begin()) out += ",\n";
    out += inner;
    if (v.is_object()) out += Json(it.key()).dump() + ": ";
    dump_readable(*it, indent + 2, out);
  }
  out += '\n';
  out.append(indent, ' ');
  out += v.is_object() ? '}' : ']';
}

}  // namespace

std::string dump_readable_json(const Json& value) {
  std::string out;
  dump_readable(value, 0, out);
  out += '\n';
  return out;
}

}  // namespace burst::topo
