// Reading our JSON formats (topology, calibration, plan) with errors a user can act on.
//
// Every accessor takes the object and the JSON pointer of that object, reports a problem at
// "file:/json/pointer" when a field is missing, has the wrong type or a bad unit, and returns
// std::nullopt so the caller can go on checking the rest. Unknown keys are reported with a
// did-you-mean, since a misspelt optional field would otherwise be silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/untrusted_file.hpp"

namespace burst {

using Json = nlohmann::ordered_json;

// The small JSON documents (a plan, a calibration, a model config, a run report): at most this
// many bytes (the largest plan of a 1024-node cluster is a few MB).
inline constexpr FileCap kJsonDocumentCap{"a JSON document", 64 * kMiB};
// Reads (read_untrusted_file: a regular file within `cap`) and parses a JSON file; a missing
// file, one over the cap or a syntax error throws burst::Error with the file name, line and column.
[[nodiscard]] Json read_json_file(const std::string& path, const FileCap& cap = kJsonDocumentCap);
// Deeper nesting than this is refused before parsing (a 200000-level document would overflow
// the stack in any recursive walk of the parsed value).
inline constexpr int kMaxJsonDepth = 512;
// Parses JSON text; `source` names it in errors (with line and column).
[[nodiscard]] Json parse_json_text(std::string_view text, const std::string& source);

class JsonReader {
 public:
  JsonReader(std::string source, Problems& problems) : source_(std::move(source)), problems_(problems) {}

  [[nodiscard]] std::string where(std::string_view pointer) const;
  void problem(std::string_view pointer, std::string what, std::string valid = {}, std::string hint = {});

  // Field accessors: `obj` is an object found at `pointer`.
  const Json* object(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  const Json* array(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  std::optional<std::string> string(const Json& obj, std::string_view pointer, std::string_view key,
                                    bool required = true);
  // A string that names something or says something to a person (a model, a topology, a
  // device, a strategy, a reason): printable text only (common/escape.hpp), since it goes into
  // comments, scripts, settings files, reports and terminals. Anything else is reported with
  // the byte that is not ("byte 2 is a control character (\x1b)").
  std::optional<std::string> name(const Json& obj, std::string_view pointer, std::string_view key,
                                  bool required = true);
  // Reports `text`, found at `pointer`, when it is not printable; true when it is.
  bool printable(std::string_view pointer, std::string_view text);
  std::optional<double> number(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  std::optional<std::int64_t> integer(const Json& obj, std::string_view pointer, std::string_view key,
                                      bool required = true, std::int64_t min = 0, std::int64_t max = INT64_MAX);
  std::optional<bool> boolean(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  // String fields with units, e.g. "200GBps"; see common/units.hpp.
  std::optional<double> bandwidth(const Json& obj, std::string_view pointer, std::string_view key,
                                  bool required = true);
  std::optional<double> duration(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  std::optional<double> bytes(const Json& obj, std::string_view pointer, std::string_view key, bool required = true);
  std::optional<double> flop_rate(const Json& obj, std::string_view pointer, std::string_view key,
                                  bool required = true);
  // One of `choices`; reports the valid ones and a did-you-mean otherwise.
  std::optional<std::string> choice(const Json& obj, std::string_view pointer, std::string_view key,
                                    const std::vector<std::string>& choices, bool required = true);
  // Reports keys of `obj` not in `allowed`.
  void reject_unknown_keys(const Json& obj, std::string_view pointer, const std::vector<std::string>& allowed);
  // Reports "must be positive" for each (key, value) whose key `obj` gives and whose value (as
  // read, with its unit) is not above 0; a key `obj` leaves out keeps its default unchecked.
  void require_positive(const Json& obj, std::string_view pointer,
                        std::span<const std::pair<const char*, double>> fields);

  [[nodiscard]] static std::string child(std::string_view pointer, std::string_view key);
  [[nodiscard]] static std::string child(std::string_view pointer, std::size_t index);

 private:
  const Json* field(const Json& obj, std::string_view pointer, std::string_view key, bool required,
                    std::string_view type_name);
  template <class Parse>
  std::optional<double> unit_field(const Json& obj, std::string_view pointer, std::string_view key, bool required,
                                   Parse parse);

  std::string source_;
  Problems& problems_;
};

}  // namespace burst
