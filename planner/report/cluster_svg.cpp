// The cluster picture with the plan's rings (see cluster_svg.hpp), drawn on svg::Canvas.
//
// Geometry first (where each node row, GPU and the elided box sit), then the boxes, then the
// arrows on top. Every arrow is routed from the facts of its two ends only (same row and
// neighbours, same row, next row, anything else), so the same plan always gives the same
// picture, byte for byte.
#include "planner/detail/report/cluster_svg.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "planner/detail/report/svg_canvas.hpp"
#include "planner/detail/report/text_metrics.hpp"

namespace burst::planner::svg {
namespace {

constexpr double kWidth = 900;
constexpr double kLeft = 64;  // the left margin carries arrows that close a ring
constexpr double kNodeWidth = 690;
constexpr double kFabricX = kLeft + kNodeWidth + 40, kFabricWidth = 90;
constexpr double kTop = 40;  // room above the first node for arrows coming back to it
constexpr double kHeader = 34, kGpuHeight = 44, kBarHeight = 18, kNodeHeight = 150;
constexpr double kGap = 48;  // between node rows: arrows to the next node run here
constexpr double kElidedHeight = 54;
constexpr double kPad = 12, kGpuGap = 16;
constexpr int kFullNodesWhenLarge = 3;  // beyond kMaxFullNodes nodes, only this many are drawn
constexpr int kMaxFullNodes = 4;

constexpr const char* kNodeFill = "#FAFAFA";
constexpr const char* kGpuFill = "#E8F1FA";
constexpr const char* kGpuStroke = "#0072B2";
constexpr const char* kIdleFill = "#F2F2F2";
constexpr const char* kIdleStroke = "#BBBBBB";
constexpr const char* kSwitchFill = "#DCE6DC";
constexpr const char* kNicFill = "#F3E3C3";
constexpr const char* kFabricFill = "#E6E0EE";
constexpr const char* kGroupFill = "#FBE3BF";
constexpr const char* kTpGroupFill = "#CFE3F5";

const Json* member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string text_at(const Json& obj, const char* key) {
  const Json* v = member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// What the node template holds, read defensively (a partial cluster still draws).
struct NodeShape {
  int gpus = 0, nics = 0;
  bool nvswitch = false, pcie_switch = false;
  std::string nvlink, nic_bandwidth, fabric;  // as written in the topology, or ""
};

NodeShape node_shape(const Json& cluster) {
  NodeShape s;
  const Json* node = member(cluster, "node");
  if (const Json* devices = node ? member(*node, "devices") : nullptr; devices && devices->is_array()) {
    for (const auto& d : *devices) {
      const std::string kind = text_at(d, "kind");
      s.gpus += kind == "gpu" ? 1 : 0;
      s.nics += kind == "nic" ? 1 : 0;
      s.nvswitch = s.nvswitch || kind == "nvswitch";
      s.pcie_switch = s.pcie_switch || kind == "pcie-switch";
      if (kind == "nic" && s.nic_bandwidth.empty()) s.nic_bandwidth = text_at(d, "port_bandwidth");
    }
  }
  if (const Json* links = node ? member(*node, "links") : nullptr; links && links->is_array()) {
    for (const auto& l : *links) {
      if (text_at(l, "kind") == "nvlink" && s.nvlink.empty()) s.nvlink = text_at(l, "bandwidth");
    }
  }
  if (const Json* gpus = member(cluster, "gpus_per_node"); s.gpus == 0 && gpus && gpus->is_number_integer()) {
    s.gpus = gpus->get<int>();
  }
  if (const Json* fabric = member(cluster, "fabric")) s.fabric = text_at(*fabric, "kind");
  return s;
}

// Where everything sits. Rows are the drawn nodes, then (when some are elided) one box.
struct Layout {
  int nodes = 0, per_node = 0, drawn = 0;  // drawn: nodes drawn in full
  double gpu_width = 0;
  [[nodiscard]] bool elided() const { return drawn < nodes; }
  [[nodiscard]] double row_top(int row) const { return kTop + row * (kNodeHeight + kGap); }
  [[nodiscard]] double row_bottom(int row) const { return row_top(row) + (row < drawn ? kNodeHeight : kElidedHeight); }
  [[nodiscard]] double gpu_x(int local) const { return kLeft + kPad + local * (gpu_width + kGpuGap); }
  [[nodiscard]] double gpu_centre(int local) const { return gpu_x(local) + gpu_width / 2; }
  [[nodiscard]] double gpu_top(int row) const { return row_top(row) + kHeader; }
  [[nodiscard]] int rows() const { return drawn + (elided() ? 1 : 0); }
  [[nodiscard]] double height() const { return row_bottom(rows() - 1); }
};

// One end of an arrow: a GPU in a drawn row, or a place in the elided box.
struct End {
  int row = 0;
  int local = 0;
  [[nodiscard]] bool in_box(const Layout& l) const { return row >= l.drawn; }
};

struct RingStyle {
  std::string css_class;
  std::string colour;
  std::string legend;
};

std::string pt(double x, double y) { return fmt::format("{:.1f} {:.1f}", x, y); }

// The path of one arrow; `lane` (0, 1, ...) spreads arrows that share a corridor.
std::string route(const Layout& l, const End& a, const End& b, int lane) {
  const double shift = static_cast<double>(lane % 4) * 3.0 - 4.5;
  const double xa = l.gpu_centre(a.local) + shift, xb = l.gpu_centre(b.local) + shift;
  const double bottom_a = a.in_box(l) ? l.row_bottom(a.row) : l.gpu_top(a.row) + kGpuHeight;
  const double top_b = b.in_box(l) ? l.row_top(b.row) : l.gpu_top(b.row);
  if (a.row == b.row && !a.in_box(l)) {
    const int distance = b.local - a.local;
    const double cy = l.gpu_top(a.row) + kGpuHeight / 2;
    if (distance == 1 || distance == -1) {
      const double y = cy + (distance > 0 ? -8.0 : 8.0);
      const double x1 = distance > 0 ? l.gpu_x(a.local) + l.gpu_width : l.gpu_x(a.local);
      const double x2 = distance > 0 ? l.gpu_x(b.local) : l.gpu_x(b.local) + l.gpu_width;
      return "M " + pt(x1, y) + " L " + pt(x2, y);
    }
    const double rise = std::min(kHeader - 4, 10.0 + 3.0 * std::abs(distance)) + (distance < 0 ? 0.0 : -4.0);
    const double y = l.gpu_top(a.row);
    return "M " + pt(xa, y) + " C " + pt(xa, y - rise) + " " + pt(xb, y - rise) + " " + pt(xb, y);
  }
  const double lane_y = 10.0 + static_cast<double>(lane % 5) * 7.0;
  const double below_a = l.row_bottom(a.row) + lane_y;
  if (b.row == a.row + 1) {
    return "M " + pt(xa, bottom_a) + " L " + pt(xa, below_a) + " L " + pt(xb, below_a) + " L " + pt(xb, top_b);
  }
  const double margin_x = 10.0 + static_cast<double>(lane % 6) * 8.0;
  const double above_b = l.row_top(b.row) - kGap + lane_y;
  return "M " + pt(xa, bottom_a) + " L " + pt(xa, below_a) + " L " + pt(margin_x, below_a) + " L " +
         pt(margin_x, above_b) + " L " + pt(xb, above_b) + " L " + pt(xb, top_b);
}

std::vector<RingStyle> ring_styles(const plan::Plan& plan) {
  std::vector<RingStyle> styles;
  const plan::Strategy& s = plan.strategy;
  if (s.ring == RingKind::Double) {
    styles.push_back({"ring-intra", "#009E73", fmt::format("inner ring ({} GPUs of a node)", s.inner)});
    styles.push_back(
        {"ring-inter", "#CC79A7", fmt::format("outer ring (links the {} inner rings, GPU by GPU)", s.outer)});
  } else if (s.ulysses > 1) {
    static constexpr std::array<const char*, 6> kMembers{"#D55E00", "#0072B2", "#009E73",
                                                         "#CC79A7", "#56B4E9", "#E69F00"};
    for (int m = 0; m < s.ulysses; ++m) {
      styles.push_back({"ring-flat", kMembers[static_cast<std::size_t>(m) % kMembers.size()],
                        fmt::format("ring of Ulysses member {} ({} ranks)", m, s.cp)});
    }
  } else {
    styles.push_back({"ring-flat", "#D55E00", fmt::format("flat ring ({} ranks)", s.cp)});
  }
  return styles;
}

const RingStyle& style_of(const std::vector<RingStyle>& styles, const plan::Ring& ring) {
  if (ring.level == "inter") return styles.back();
  if (ring.level == "intra") return styles.front();
  return styles[static_cast<std::size_t>(std::max(0, ring.member)) % styles.size()];
}

// Shades each run of a node's GPUs whose ranks share `group_of(rank)` (consecutive ranks), in
// `css_class`, `inset` pixels around the GPUs.
template <class GroupOf>
void shade_groups(Canvas& c, const Layout& l, int row, const std::map<std::pair<int, int>, int>& rank_at,
                  GroupOf group_of, const char* css_class, const char* fill, double inset) {
  const double gpu_top = l.gpu_top(row);
  for (int local = 0; local < l.per_node;) {
    const auto at = rank_at.find({row, local});
    if (at == rank_at.end()) {
      ++local;
      continue;
    }
    int last = local;
    while (last + 1 < l.per_node && rank_at.contains({row, last + 1}) &&
           group_of(rank_at.at({row, last + 1})) == group_of(at->second)) {
      ++last;
    }
    c.begin_group(css_class);
    c.box(l.gpu_x(local) - inset, gpu_top - inset, l.gpu_x(last) + l.gpu_width - l.gpu_x(local) + 2 * inset,
          kGpuHeight + 2 * inset, fill, "none", 5);
    c.end_group();
    local = last + 1;
  }
}

void draw_node(Canvas& c, const Layout& l, int row, const NodeShape& shape,
               const std::map<std::pair<int, int>, int>& rank_at, const plan::Strategy& s) {
  const double top = l.row_top(row);
  c.box(kLeft, top, kNodeWidth, kNodeHeight, kNodeFill, "#888888", 6);
  c.text(kLeft + 8, top + 14, fmt::format("node {}", row), "start", 12);
  const double gpu_top = l.gpu_top(row);
  const int tp = std::max(1, s.tp), ulysses = std::max(1, s.ulysses);
  // World rank r is tensor-parallel rank r % T of context-parallel rank r / T, whose Ulysses
  // group is (r / T) / U: the groups nest, the Ulysses group outside.
  if (ulysses > 1) {
    shade_groups(
        c, l, row, rank_at, [&](int rank) { return rank / tp / ulysses; }, "ulysses-group", kGroupFill, 7);
  }
  if (tp > 1)
    shade_groups(
        c, l, row, rank_at, [&](int rank) { return rank / tp; }, "tp-group", kTpGroupFill, 3);
  for (int local = 0; local < l.per_node; ++local) {
    const auto at = rank_at.find({row, local});
    const bool used = at != rank_at.end();
    c.begin_group(used ? "gpu" : "gpu-idle");
    c.box(l.gpu_x(local), gpu_top, l.gpu_width, kGpuHeight, used ? kGpuFill : kIdleFill,
          used ? kGpuStroke : kIdleStroke);
    const double room = l.gpu_width - 4;
    c.text(l.gpu_centre(local), gpu_top + 16, fit_text(fmt::format("GPU {}", local), 10, room), "middle", 10);
    c.text(l.gpu_centre(local), gpu_top + 33, fit_text(used ? fmt::format("rank {}", at->second) : "idle", 11, room),
           "middle", 11);
    c.end_group();
  }
  const double bar_y = gpu_top + kGpuHeight + 14;
  if (shape.nvswitch || shape.pcie_switch) {
    const std::string name = shape.nvswitch ? "NVSwitch" : "PCIe switches";
    const std::string speed = shape.nvswitch && !shape.nvlink.empty() ? ", NVLink " + shape.nvlink + " per GPU" : "";
    const double bar_width = l.gpu_x(l.per_node - 1) + l.gpu_width - l.gpu_x(0);
    c.box(l.gpu_x(0), bar_y, bar_width, kBarHeight, kSwitchFill, "none");
    c.text(l.gpu_x(0) + 6, bar_y + 13, fit_text(name + speed, 11, bar_width - 12), "start", 11);
  }
  const double nic_y = bar_y + kBarHeight + 12;
  const double span = l.gpu_x(l.per_node - 1) + l.gpu_width - l.gpu_x(0);
  for (int n = 0; n < shape.nics; ++n) {
    const double slot = span / shape.nics;
    const double w = std::min(70.0, slot - 8);
    const double x = l.gpu_x(0) + (n + 0.5) * slot - w / 2;
    c.box(x, nic_y, w, kBarHeight, kNicFill, "none");
    c.text(x + w / 2, nic_y + 13, fit_text(fmt::format("NIC {}", n), 10, w - 4), "middle", 10);
  }
  if (shape.nics > 0) {
    c.line(kLeft + kNodeWidth, nic_y + kBarHeight / 2, kFabricX, nic_y + kBarHeight / 2, "#7A6A96", 2);
  }
}

}  // namespace

std::string cluster_picture(const plan::Plan& plan, bool standalone) {
  const NodeShape shape = node_shape(plan.cluster);
  std::map<std::pair<int, int>, int> rank_at;  // (node, local) -> rank
  std::map<int, std::pair<int, int>> place;    // rank -> (node, local)
  Layout l;
  for (const auto& r : plan.ranks) {
    rank_at[{r.node, r.local}] = r.rank;
    place[r.rank] = {r.node, r.local};
    l.nodes = std::max(l.nodes, r.node + 1);
    l.per_node = std::max(l.per_node, r.local + 1);
  }
  if (const Json* n = member(plan.cluster, "nodes"); n && n->is_number_integer()) {
    l.nodes = std::max(l.nodes, std::min(n->get<int>(), 1 << 20));
  }
  l.per_node = std::max({l.per_node, shape.gpus, 1});
  l.nodes = std::max(l.nodes, 1);
  l.drawn = l.nodes > kMaxFullNodes ? kFullNodesWhenLarge : l.nodes;
  l.gpu_width = (kNodeWidth - 2 * kPad - (l.per_node - 1) * kGpuGap) / l.per_node;

  const std::vector<RingStyle> styles = ring_styles(plan);
  std::vector<std::string> names, colours;
  if (plan.strategy.ulysses > 1) {
    names.push_back(fmt::format("Ulysses group ({} ranks split the heads)", plan.strategy.ulysses));
    colours.emplace_back(kGroupFill);
  }
  if (plan.strategy.tp > 1) {
    names.push_back(fmt::format("tensor-parallel group ({} GPUs split every layer's weights)", plan.strategy.tp));
    colours.emplace_back(kTpGroupFill);
  }
  for (const auto& s : styles) {
    names.push_back(s.legend);
    colours.push_back(s.colour);
  }
  const double legend_height = Canvas(kWidth, 0, "", false).legend(kLeft, 0, kWidth - kLeft - 10, names, colours);
  const double legend_y = l.height() + kGap;  // below the arrows that leave the last row
  Canvas c(kWidth, legend_y + legend_height + 8, "The cluster and the plan's rings", standalone);
  for (std::size_t i = 0; i < styles.size(); ++i) c.arrow_marker(fmt::format("cluster-arrow-{}", i), styles[i].colour);

  c.box(kFabricX, l.row_top(0), kFabricWidth, l.height() - l.row_top(0), kFabricFill, "#7A6A96", 6);
  const double fabric_mid = (l.row_top(0) + l.height()) / 2;
  const std::string fabric = "fabric" + (shape.fabric.empty() ? std::string() : ": " + shape.fabric) +
                             (shape.nic_bandwidth.empty() ? "" : ", " + shape.nic_bandwidth + " per NIC port");
  c.text(kFabricX + kFabricWidth / 2 + 4, fabric_mid, fit_text(fabric, 12, l.height() - l.row_top(0) - 12), "middle",
         12, -90);
  for (int row = 0; row < l.drawn; ++row) draw_node(c, l, row, shape, rank_at, plan.strategy);
  if (l.elided()) {
    const int rest = l.nodes - l.drawn;
    const double top = l.row_top(l.drawn);
    c.box(kLeft, top, kNodeWidth, kElidedHeight, "#FFFFFF", "#888888", 6);
    c.text(kLeft + kNodeWidth / 2, top + 24,
           fit_text(fmt::format("... {} more node{} like these (nodes {} to {})", rest, rest == 1 ? "" : "s", l.drawn,
                                l.nodes - 1),
                    13, kNodeWidth - 16),
           "middle", 13);
    c.text(kLeft + kNodeWidth / 2, top + 42,
           fit_text("arrows into and out of this box are the rings' hops to and from them", 10, kNodeWidth - 16),
           "middle", 10);
    c.line(kLeft + kNodeWidth, top + kElidedHeight / 2, kFabricX, top + kElidedHeight / 2, "#7A6A96", 2);
  }

  int lane = 0;
  for (const auto& ring : plan.rings) {
    const RingStyle& style = style_of(styles, ring);
    const auto index = static_cast<std::size_t>(&style - styles.data());
    const std::size_t n = ring.order.size();
    for (std::size_t i = 0; n > 1 && i < n; ++i) {
      const auto from = place.find(ring.order[i]), to = place.find(ring.order[(i + 1) % n]);
      if (from == place.end() || to == place.end()) continue;
      const End a{std::min(from->second.first, l.drawn), from->second.second};
      const End b{std::min(to->second.first, l.drawn), to->second.second};
      if (a.in_box(l) && b.in_box(l)) continue;
      const bool elided = a.in_box(l) || b.in_box(l);
      c.path(route(l, a, b, lane), style.colour, 2, elided ? "ring-elided" : style.css_class,
             fmt::format("cluster-arrow-{}", index), elided);
    }
    ++lane;
  }
  c.legend(kLeft, legend_y, kWidth - kLeft - 10, names, colours);
  return c.finish();
}

}  // namespace burst::planner::svg
