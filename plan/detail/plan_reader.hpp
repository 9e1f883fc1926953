// Internal to burst_plan: the reader behind plan_from_json, shared by the files that check
// one part of a plan each (plan_read_sections.cpp: meta, job, strategy, predictions;
// plan_read_world.cpp: rank placement and ring orders; plan_from_json.cpp: the document).
//
// Every check adds a Problem at its JSON pointer and goes on, so one read reports all that is
// wrong. Numbers that later checks depend on (cp, ulysses, ring sizes, the world size) come
// back as std::optional: empty when they were themselves wrong, so one bad field never
// cascades into a second, misleading complaint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_reader.hpp"
#include "plan/plan.hpp"

namespace burst::plan::detail {

// The sizes of a strategy that world and ring checks compare against; each is empty when
// its own field was missing or invalid.
struct StrategySizes {
  std::optional<std::int64_t> tp = 1, dp = 1, cp, ulysses, inner, outer;
};

class PlanReader {
 public:
  explicit PlanReader(const std::string& source) : reader_(source, problems_) {}

  [[nodiscard]] JsonReader& json() { return reader_; }
  // The document's plan version: 2 requires "tp" and "dp" in every strategy and ring (and the
  // strategy's "micro_batch"), 1 has none (tp 1, dp 1, the batch one micro-batch).
  void set_version(int version) { version_ = version; }
  [[nodiscard]] Problems& problems() { return problems_; }

  // Sections (plan_read_sections.cpp). `pointer` is where `j` sits in the document.
  void meta(const Json& j, std::string_view pointer, Plan& plan);
  void job(const Json& j, std::string_view pointer, Job& job);
  StrategySizes strategy(const Json& j, std::string_view pointer, Strategy& s);
  void prediction(const Json& j, std::string_view pointer, Prediction& p);

  // Placement (plan_read_world.cpp): returns the world size when it is valid.
  std::optional<std::int64_t> world(const Json& j, std::string_view pointer, const StrategySizes& sizes,
                                    std::vector<RankPlacement>& ranks);
  void rings(const Json& j, std::string_view pointer, const StrategySizes& sizes,
             std::optional<std::int64_t> world_size, std::vector<Ring>& rings);

  // Typed fields: each stores the value into `out` and returns true, or reports and returns
  // false leaving `out` as it was.
  template <class Int>
  bool integer(const Json& obj, std::string_view pointer, std::string_view key, Int& out, std::int64_t min,
               std::int64_t max);
  bool non_negative(const Json& obj, std::string_view pointer, std::string_view key, double& out);
  // A name or a reason: printable text only (JsonReader::name).
  bool text(const Json& obj, std::string_view pointer, std::string_view key, std::string& out);
  bool flag(const Json& obj, std::string_view pointer, std::string_view key, bool& out);
  // A string spelled by one of common/parallelism.hpp's parsers, e.g. parse_layout.
  template <class Enum, class Parse>
  bool spelled(const Json& obj, std::string_view pointer, std::string_view key, Enum& out, Parse parse);
  // An object field, checked against its known keys; nullptr (reported) when absent or not one.
  const Json* section(const Json& obj, std::string_view pointer, std::string_view key,
                      const std::vector<std::string>& keys);

 private:
  Problems problems_;
  int version_ = 2;
  JsonReader reader_;
};

template <class Int>
bool PlanReader::integer(const Json& obj, std::string_view pointer, std::string_view key, Int& out, std::int64_t min,
                         std::int64_t max) {
  const auto value = reader_.integer(obj, pointer, key, true, min, max);
  if (value) out = static_cast<Int>(*value);
  return value.has_value();
}

template <class Enum, class Parse>
bool PlanReader::spelled(const Json& obj, std::string_view pointer, std::string_view key, Enum& out, Parse parse) {
  const auto value = reader_.string(obj, pointer, key);
  if (!value) return false;
  try {
    out = parse(*value, reader_.where(JsonReader::child(pointer, key)));
    return true;
  } catch (const Error& e) {
    for (const auto& p : e.problems()) problems_.add(p);
    return false;
  }
}

// Largest count of ranks, ring members, layers ... a plan may name (keeps products in range).
inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxInt = INT32_MAX;

}  // namespace burst::plan::detail
