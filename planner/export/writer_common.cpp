// What every writer shares: the summary line, the header and comment prefixes (see writers.hpp).
// The header names the plan file, the model and the topology, and the notes quote strategy
// names and reasons: every line goes through escape::comment, so none of them can end its
// comment and start a line of shell, a YAML key or a TOML table.
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "common/escape.hpp"
#include "common/units.hpp"
#include "planner/detail/export/writers.hpp"

namespace burst::exporter {

std::string export_summary(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  return fmt::format("{}: {}, {} tokens x {} ({} mask) on {}, {} ranks", in.source, p.job.model.name,
                     units::format_tokens(p.job.seq), p.job.batch, to_string(p.job.mask), p.topology_name,
                     p.ranks.size());
}

std::vector<std::string> header_lines(const ExportInput& in, const std::string& usage) {
  std::vector<std::string> lines;
  if (!in.warning.empty()) lines.push_back(in.warning);
  lines.insert(lines.end(), {
                                fmt::format("{} settings written by burst {} (burst export --to {})",
                                            in.framework.title, BURST_VERSION, in.framework.name),
                                "plan: " + export_summary(in),
                                fmt::format("follows {} {}", in.framework.title, in.framework.version),
                                usage,
                            });
  for (const std::string& note : in.notes) lines.push_back("note: " + note);
  return lines;
}

std::string commented(const std::vector<std::string>& lines, const std::string& prefix) {
  std::string out;
  for (const std::string& line : lines) out += prefix + escape::comment(line) + "\n";
  return out;
}

std::string rope_base_text(double base) {
  if (base == std::floor(base) && base < 1e15) return fmt::format("{}", static_cast<std::int64_t>(base));
  return fmt::format("{}", base);
}

}  // namespace burst::exporter
