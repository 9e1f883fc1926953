// Internal to burst_report: the report as a format-neutral document.
//
// What the report says is decided once, here, from the plan (report_document.cpp, the
// verdict and tables; report_cluster.cpp, the cluster summary); the Markdown and HTML
// renderers only spell the same blocks in their syntax and escaping. Text is plain: no
// markup, so a model named "<script>" is escaped by whichever renderer prints it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "common/json_reader.hpp"
#include "planner/report/report.hpp"

namespace burst::planner::report_doc {

struct Table {
  std::string id;  // a stable name ("peers", "scaling") for HTML anchors and tests
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct Chart {
  std::string caption;     // also the image's alt text in Markdown
  std::string svg_inline;  // without the XML namespace: for HTML
  std::string svg_file;    // with it: for a data: URI
};

using Block = std::variant<std::string, Table, Chart>;  // a paragraph, a table or a chart

struct Section {
  std::string heading;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<Section> sections;
};

[[nodiscard]] Document build(const ReportInput& input);

// Rows (field, value) describing a burst.topology/1 document (or a topology summary), using
// only the fields present: a plan made for a hand-written or partial cluster still reports.
[[nodiscard]] std::vector<std::vector<std::string>> cluster_rows(const Json& cluster);

}  // namespace burst::planner::report_doc
