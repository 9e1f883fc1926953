#include "common/json_reader.hpp"

#include <cctype>
#include <map>

#include <fmt/format.h>

#include "common/escape.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace burst {
namespace {

// Line and column (1-based) of a byte offset.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// JSON pointer escaping (RFC 6901).
std::string escape_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// What a scan of the raw text finds before nlohmann builds anything: nesting deeper than
// kMaxJsonDepth (so no recursive walk of the parsed value, a copy, a comparison, a dump, ever
// sees a document deep enough to overflow the stack), and a key repeated in one object (which
// nlohmann would resolve silently, the last one winning). Brackets and colons inside strings do
// not count; keys compare as the parser will read them, escapes decoded ("\u006eodes" is the
// key "nodes"). Syntax errors are left to the parser, which reports them with their position.
struct ScanProblem {
  std::size_t at = std::string_view::npos;  // byte offset; npos: none
  std::size_t first = 0;                    // duplicate key: where the key first appeared
  std::string key;                          // as written at `at`; empty: too deep
  std::string first_key;                    // as written at `first`
};

// A key's raw text (between its quotes) as the parser reads it. Only a key with a backslash
// needs decoding, by nlohmann itself so both agree; a malformed escape stays raw (the parser
// reports it).
std::string decoded_key(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  try {
    std::string quoted(raw.size() + 2, '"');
    raw.copy(quoted.data() + 1, raw.size());
    return Json::parse(quoted).get<std::string>();
  } catch (const Json::exception&) {
    return std::string(raw);
  }
}

ScanProblem scan_json(std::string_view text) {
  struct Frame {
    bool object = false;
    struct Seen {
      std::size_t at;        // offset of the key's opening quote
      std::string_view raw;  // as written
    };
    std::map<std::string, Seen> keys;  // object: decoded key -> where and how it was first written
  };
  std::vector<Frame> frames;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t begin = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      std::size_t next = i + 1;
      while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
      if (!frames.empty() && frames.back().object && next < text.size() && text[next] == ':' && i < text.size()) {
        const std::string_view key = text.substr(begin + 1, i - begin - 1);
        const auto [it, fresh] = frames.back().keys.emplace(decoded_key(key), Frame::Seen{begin, key});
        if (!fresh) return {begin, it->second.at, std::string(key), std::string(it->second.raw)};
      }
    } else if (c == '[' || c == '{') {
      if (frames.size() == static_cast<std::size_t>(kMaxJsonDepth)) return {i, 0, {}, {}};
      frames.push_back({c == '{', {}});
    } else if ((c == ']' || c == '}') && !frames.empty()) {
      frames.pop_back();
    }
  }
  return {};
}

}  // namespace

Json parse_json_text(std::string_view text, const std::string& source) {
  if (const ScanProblem p = scan_json(text); p.at != std::string_view::npos) {
    const auto [line, column] = line_column(text, p.at);
    const std::string where = fmt::format("{}:{}:{}", source, line, column);
    if (p.key.empty()) {
      throw Error(Problem{where,
                          fmt::format("invalid JSON: arrays and objects nest deeper than {} levels", kMaxJsonDepth),
                          fmt::format("at most {} levels", kMaxJsonDepth),
                          "no burst file nests more than a few levels; this one is damaged or not meant for burst"});
    }
    const auto [first_line, first_column] = line_column(text, p.first);
    const std::string spelled = p.first_key == p.key ? "" : fmt::format(", written '{}'", p.first_key);
    throw Error(
        Problem{where, fmt::format("duplicate key '{}' (first at {}:{}{})", p.key, first_line, first_column, spelled),
                "each key once per object", "remove one of them: which one was meant is not for burst to guess"});
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 8:
    // syntax error while parsing value - unexpected ']'; expected ...": keep what follows the
    // position, which we print in our own "file:line:column" form.
    std::string what = e.what();
    if (const auto pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
    throw Error(Problem{fmt::format("{}:{}:{}", source, line, column), "invalid JSON: " + what, "", ""});
  } catch (const Json::exception& e) {
    // A number beyond double range (1e999) is reported as out_of_range, without a position.
    std::string what = e.what();
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw Error(Problem{source, "invalid JSON: " + what, "numbers within double range", ""});
  }
}

Json read_json_file(const std::string& path, const FileCap& cap) {
  return parse_json_text(read_untrusted_file(path, cap), path);
}

std::string JsonReader::child(std::string_view pointer, std::string_view key) {
  return fmt::format("{}/{}", pointer, escape_token(key));
}
std::string JsonReader::child(std::string_view pointer, std::size_t index) {
  return fmt::format("{}/{}", pointer, index);
}

std::string JsonReader::where(std::string_view pointer) const {
  return fmt::format("{}:{}", source_, pointer.empty() ? "/" : pointer);
}

void JsonReader::problem(std::string_view pointer, std::string what, std::string valid, std::string hint) {
  problems_.add(where(pointer), std::move(what), std::move(valid), std::move(hint));
}

const Json* JsonReader::field(const Json& obj, std::string_view pointer, std::string_view key, bool required,
                              std::string_view type_name) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) problem(child(pointer, key), fmt::format("missing required field '{}'", key), std::string(type_name));
    return nullptr;
  }
  return &*it;
}

const Json* JsonReader::object(const Json& obj, std::string_view pointer, std::string_view key, bool required) {
  const Json* v = field(obj, pointer, key, required, "an object");
  if (v && !v->is_object()) {
    problem(child(pointer, key), fmt::format("expected an object, found {}", v->type_name()));
    return nullptr;
  }
  return v;
}

const Json* JsonReader::array(const Json& obj, std::string_view pointer, std::string_view key, bool required) {
  const Json* v = field(obj, pointer, key, required, "an array");
  if (v && !v->is_array()) {
    problem(child(pointer, key), fmt::format("expected an array, found {}", v->type_name()));
    return nullptr;
  }
  return v;
}

std::optional<std::string> JsonReader::string(const Json& obj, std::string_view pointer, std::string_view key,
                                              bool required) {
  const Json* v = field(obj, pointer, key, required, "a string");
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    problem(child(pointer, key), fmt::format("expected a string, found {}", v->type_name()));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::string> JsonReader::name(const Json& obj, std::string_view pointer, std::string_view key,
                                            bool required) {
  auto value = string(obj, pointer, key, required);
  if (value && !printable(child(pointer, key), *value)) return std::nullopt;
  return value;
}

bool JsonReader::printable(std::string_view pointer, std::string_view text) {
  if (!escape::unprintable_at(text)) return true;
  problem(pointer, fmt::format("'{}': {}", escape::terminal(text), escape::describe_unprintable(text)),
          "printable text: no control characters, line breaks or tabs",
          "names and messages are written into scripts, settings files, reports and terminals");
  return false;
}

std::optional<double> JsonReader::number(const Json& obj, std::string_view pointer, std::string_view key,
                                         bool required) {
  const Json* v = field(obj, pointer, key, required, "a number");
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    problem(child(pointer, key), fmt::format("expected a number, found {}", v->type_name()));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<std::int64_t> JsonReader::integer(const Json& obj, std::string_view pointer, std::string_view key,
                                                bool required, std::int64_t min, std::int64_t max) {
  const Json* v = field(obj, pointer, key, required, "an integer");
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    problem(child(pointer, key), fmt::format("expected an integer, found {}", v->dump()));
    return std::nullopt;
  }
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    problem(child(pointer, key), "integer is too large");
    return std::nullopt;
  }
  const auto value = v->get<std::int64_t>();
  if (value < min || value > max) {
    problem(child(pointer, key), fmt::format("{} is out of range", value), fmt::format("{} to {}", min, max));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> JsonReader::boolean(const Json& obj, std::string_view pointer, std::string_view key,
                                        bool required) {
  const Json* v = field(obj, pointer, key, required, "true or false");
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    problem(child(pointer, key), fmt::format("expected true or false, found {}", v->type_name()));
    return std::nullopt;
  }
  return v->get<bool>();
}

template <class Parse>
std::optional<double> JsonReader::unit_field(const Json& obj, std::string_view pointer, std::string_view key,
                                             bool required, Parse parse) {
  const Json* v = field(obj, pointer, key, required, "a string with a unit");
  if (!v) return std::nullopt;
  const std::string at = where(child(pointer, key));
  if (!v->is_string()) {
    problem(child(pointer, key), fmt::format("expected a string with a unit, found {}", v->dump()), "",
            "units go inside the string, e.g. \"200GBps\"");
    return std::nullopt;
  }
  try {
    return parse(v->get<std::string>(), at);
  } catch (const Error& e) {
    for (const auto& p : e.problems()) problems_.add(p);
    return std::nullopt;
  }
}

std::optional<double> JsonReader::bandwidth(const Json& obj, std::string_view pointer, std::string_view key,
                                            bool required) {
  return unit_field(obj, pointer, key, required, units::parse_bandwidth);
}
std::optional<double> JsonReader::duration(const Json& obj, std::string_view pointer, std::string_view key,
                                           bool required) {
  return unit_field(obj, pointer, key, required, units::parse_duration);
}
std::optional<double> JsonReader::bytes(const Json& obj, std::string_view pointer, std::string_view key,
                                        bool required) {
  return unit_field(obj, pointer, key, required, units::parse_bytes);
}
std::optional<double> JsonReader::flop_rate(const Json& obj, std::string_view pointer, std::string_view key,
                                            bool required) {
  return unit_field(obj, pointer, key, required, units::parse_flop_rate);
}

std::optional<std::string> JsonReader::choice(const Json& obj, std::string_view pointer, std::string_view key,
                                              const std::vector<std::string>& choices, bool required) {
  auto value = string(obj, pointer, key, required);
  if (!value) return std::nullopt;
  for (const auto& c : choices) {
    if (*value == c) return value;
  }
  problem(child(pointer, key), fmt::format("'{}' is not valid", *value), text::join(choices),
          text::did_you_mean(*value, choices));
  return std::nullopt;
}

void JsonReader::require_positive(const Json& obj, std::string_view pointer,
                                  std::span<const std::pair<const char*, double>> fields) {
  for (const auto& [key, value] : fields) {
    if (obj.contains(key) && !(value > 0)) problem(child(pointer, key), "must be positive");
  }
}

void JsonReader::reject_unknown_keys(const Json& obj, std::string_view pointer,
                                     const std::vector<std::string>& allowed) {
  if (!obj.is_object()) return;
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (const auto& a : allowed) known = known || key == a;
    if (!known) {
      problem(child(pointer, key), fmt::format("unknown field '{}'", key), text::join(allowed),
              text::did_you_mean(key, allowed));
    }
  }
}

}  // namespace burst
