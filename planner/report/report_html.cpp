// The capacity report as one self-contained HTML file: inline CSS, inline SVG charts, no
// scripts, fonts or links to fetch, so it opens offline and can be mailed as is. The markup
// is also well-formed XML (every element closed, every text and attribute escaped), so tools
// and tests can parse it with an XML parser.
#include <variant>

#include "common/escape.hpp"
#include "planner/report/report.hpp"
#include "planner/detail/report/report_document.hpp"
#include "planner/detail/report/report_text.hpp"

namespace burst::planner {
namespace {

namespace rt = report_text;

constexpr const char* kStyle = R"(
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222222; line-height: 1.45; }
h1 { font-size: 1.6rem; border-bottom: 2px solid #0072B2; padding-bottom: 0.3rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #CCCCCC; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #F2F2F2; }
figure { margin: 0.5rem 0; }
figcaption { font-size: 0.85rem; color: #555555; }
)";

// <tag>escaped cells</tag> for each cell.
std::string cells(const std::vector<std::string>& row, const char* tag) {
  std::string out = "<tr>";
  for (const auto& cell : row) out += std::string("<") + tag + ">" + escape::html(cell) + "</" + tag + ">";
  return out + "</tr>\n";
}

struct HtmlBlock {
  std::string& out;
  void operator()(const std::string& paragraph) const { out += "<p>" + escape::html(paragraph) + "</p>\n"; }
  void operator()(const report_doc::Table& t) const {
    out += "<table id=\"" + escape::html(t.id) + "\">\n<thead>\n" + cells(t.header, "th") + "</thead>\n<tbody>\n";
    for (const auto& row : t.rows) out += cells(row, "td");
    out += "</tbody>\n</table>\n";
  }
  void operator()(const report_doc::Chart& c) const {
    out += "<figure>\n" + c.svg_inline + "<figcaption>" + escape::html(c.caption) + "</figcaption>\n</figure>\n";
  }
};

}  // namespace

std::string render_html(const ReportInput& input) {
  const report_doc::Document doc = report_doc::build(input);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" +
                    escape::html(doc.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
                    escape::html(doc.title) + "</h1>\n";
  for (const auto& section : doc.sections) {
    out += "<section>\n<h2>" + escape::html(section.heading) + "</h2>\n";
    for (const auto& block : section.blocks) std::visit(HtmlBlock{out}, block);
    out += "</section>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace burst::planner
