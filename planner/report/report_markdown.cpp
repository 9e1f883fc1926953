// The capacity report as Markdown: headings, paragraphs, pipe tables, and each chart as an
// image whose source is the SVG itself in a data: URI (base64), so the file renders on any
// forge or viewer without companion files. All text is escaped for Markdown (and for the
// inline HTML that Markdown would otherwise pass through).
#include <variant>

#include "common/escape.hpp"
#include "planner/report/report.hpp"
#include "planner/detail/report/report_document.hpp"
#include "planner/detail/report/report_text.hpp"

namespace burst::planner {
namespace {

namespace rt = report_text;

std::string table_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const auto& cell : cells) {
    row += ' ';
    row += escape::markdown(cell);
    row += " |";
  }
  return row + "\n";
}

struct MarkdownBlock {
  std::string& out;
  void operator()(const std::string& paragraph) const { out += escape::markdown(paragraph) + "\n\n"; }
  void operator()(const report_doc::Table& t) const {
    out += table_row(t.header);
    out += "|";
    for (std::size_t i = 0; i < t.header.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : t.rows) out += table_row(row);
    out += "\n";
  }
  void operator()(const report_doc::Chart& c) const {
    out += "![" + escape::markdown(c.caption) + "](data:image/svg+xml;base64," + rt::base64(c.svg_file) + ")\n\n";
  }
};

}  // namespace

std::string render_markdown(const ReportInput& input) {
  const report_doc::Document doc = report_doc::build(input);
  std::string out = "# " + escape::markdown(doc.title) + "\n\n";
  for (const auto& section : doc.sections) {
    out += "## " + escape::markdown(section.heading) + "\n\n";
    for (const auto& block : section.blocks) std::visit(MarkdownBlock{out}, block);
  }
  return out;
}

}  // namespace burst::planner
