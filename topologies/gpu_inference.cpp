// The GPU model from a file's clues: see gpu_inference.hpp for the rules.
#include "topologies/detail/gpu_inference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

#include <fmt/format.h>

#include "common/text.hpp"

namespace burst::topo::hw {
namespace {

// Every GPU of the table has a x16 host link.
constexpr int kGpuPcieWidth = 16;

enum class Verdict : std::uint8_t { Fits, Silent, RulesOut };

struct Clue {
  std::string label;
  std::function<Verdict(const GpuModel&)> judge;
  bool weak = false;  // the network: its buyer's choice, no property of the GPU
};

struct Score {
  const GpuModel* model = nullptr;
  int fits = 0;
  int strong_fits = 0;              // of them, the clues that are properties of the GPU
  std::vector<std::string> missed;  // the labels of the clues it does not fit
};

bool near(double a, double b) { return std::abs(a - b) <= 0.01 * std::max(std::abs(a), std::abs(b)); }

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  if (items.size() < 2) return items.empty() ? std::string() : items.front();
  const std::vector<std::string> head(items.begin(), items.end() - 1);
  return text::join(head) + " and " + items.back();
}

// "1 clue", "3 clues".
std::string of_clues(std::size_t n) { return fmt::format("{} clue{}", n, n == 1 ? "" : "s"); }

std::string nvlinks_label(int n) { return fmt::format("{} NVLink{}", n, n == 1 ? "" : "s"); }

// "PCIe gen5 x16" (a rate of no generation: "PCIe 20 GT/s").
std::string pcie_label(double gts, int width) {
  static constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};  // gen1 to gen6
  std::string label = fmt::format("PCIe {:g} GT/s", gts);
  for (std::size_t gen = 0; gen < std::size(kRates); ++gen) {
    if (near(gts, kRates[gen])) label = fmt::format("PCIe gen{}", gen + 1);
  }
  return width > 0 ? fmt::format("{} x{}", label, width) : label;
}

std::vector<Clue> clues_of(const GpuClues& c) {
  std::vector<Clue> clues;
  if (c.sm > 0) {
    clues.push_back({fmt::format("sm {}", c.sm),
                     [sm = c.sm](const GpuModel& m) { return m.sm == sm ? Verdict::Fits : Verdict::RulesOut; }});
  }
  if (c.nvlinks > 0 && (c.to_nvswitch || c.nvlink_peers > 0)) {
    const int n = c.nvlinks;
    if (c.to_nvswitch) {
      clues.push_back({nvlinks_label(n) + " to an NVSwitch",
                       [n](const GpuModel& m) { return m.nvlinks == n ? Verdict::Fits : Verdict::RulesOut; }});
    } else if (c.nvlink_peers == 1) {
      clues.push_back({nvlinks_label(n) + " to one other GPU (an NVLink bridge)",
                       [n](const GpuModel& m) { return m.bridge_nvlinks == n ? Verdict::Fits : Verdict::RulesOut; }});
    } else {
      clues.push_back({fmt::format("{} to {} other GPUs and no NVSwitch", nvlinks_label(n), c.nvlink_peers),
                       [n](const GpuModel& m) { return m.nvlinks == n ? Verdict::Fits : Verdict::RulesOut; }});
    }
  }
  if (c.pcie_gts > 0) {
    clues.push_back({pcie_label(c.pcie_gts, c.pcie_width), [gts = c.pcie_gts, width = c.pcie_width](const GpuModel& m) {
                       if ((gts > m.pcie_gts && !near(gts, m.pcie_gts)) || width > kGpuPcieWidth) {
                         return Verdict::RulesOut;
                       }
                       const bool own_width = width == 0 || width == kGpuPcieWidth;
                       return near(gts, m.pcie_gts) && own_width ? Verdict::Fits : Verdict::Silent;
                     }});
  }
  if (c.network_Gbps_per_gpu > 0) {
    clues.push_back({fmt::format("{:g} Gb/s of network a GPU", c.network_Gbps_per_gpu),
                     [gbps = c.network_Gbps_per_gpu](const GpuModel& m) {
                       return m.reference_network_Gbps > 0 && near(gbps, m.reference_network_Gbps) ? Verdict::Fits
                                                                                                   : Verdict::Silent;
                     },
                     true});
  }
  return clues;
}

// Models that no topology file tells apart: the same compute capability, NVLinks, PCIe and peak
// compute, and each its own memory.
bool memory_twins(const std::vector<const GpuModel*>& models) {
  const GpuModel& a = *models.front();
  for (std::size_t i = 1; i < models.size(); ++i) {
    const GpuModel& b = *models[i];
    if (b.sm != a.sm || b.nvlinks != a.nvlinks || b.bridge_nvlinks != a.bridge_nvlinks || b.pcie_gts != a.pcie_gts ||
        b.spec.peak_bf16_flops != a.spec.peak_bf16_flops) {
      return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (models[j]->spec.memory_bytes == b.spec.memory_bytes) return false;
    }
  }
  return true;
}

// What tied models differ in: "NVLinks and memory".
std::string differences(const std::vector<const GpuModel*>& models) {
  const auto differ = [&](const auto& field) {
    return std::any_of(models.begin(), models.end(),
                       [&](const GpuModel* m) { return field(*m) != field(*models.front()); });
  };
  std::vector<std::string> what;
  if (differ([](const GpuModel& m) { return m.sm; })) what.emplace_back("compute capability");
  if (differ([](const GpuModel& m) { return m.nvlinks; }) ||
      differ([](const GpuModel& m) { return m.bridge_nvlinks; })) {
    what.emplace_back("NVLinks");
  }
  if (differ([](const GpuModel& m) { return m.pcie_gts; })) what.emplace_back("PCIe generation");
  if (differ([](const GpuModel& m) { return m.spec.peak_bf16_flops; })) what.emplace_back("peak compute");
  if (differ([](const GpuModel& m) { return m.spec.memory_bytes; }) ||
      differ([](const GpuModel& m) { return m.spec.memory_bandwidth_Bps; })) {
    what.emplace_back("memory");
  }
  return and_list(what);
}

std::vector<std::string> names(const std::vector<const GpuModel*>& models) {
  std::vector<std::string> v;
  for (const GpuModel* m : models) v.push_back(m->spec.model);
  return v;
}

// "; fitting fewer, also possible: H100-PCIE-80GB (2: not 400 Gb/s of network a GPU)".
std::string also_possible(const std::vector<Score>& fewer) {
  if (fewer.empty()) return "";
  std::vector<std::string> items;
  for (const Score& s : fewer) {
    items.push_back(fmt::format("{} ({}: not {})", s.model->spec.model, s.fits, text::join(s.missed, " or ")));
  }
  return "; fitting fewer, also possible: " + text::join(items, ", ");
}

}  // namespace

GpuInference infer_gpu_model(const GpuClues& given) {
  const std::vector<Clue> clues = clues_of(given);
  GpuInference result;
  for (const Clue& c : clues) result.clues.push_back(c.label);

  std::vector<Score> standing;  // the models no clue rules out
  for (const GpuModel& m : gpu_models()) {
    Score s{&m, 0, 0, {}};
    bool ruled_out = false;
    for (const Clue& c : clues) {
      const Verdict v = c.judge(m);
      ruled_out |= v == Verdict::RulesOut;
      if (v == Verdict::Fits) {
        ++s.fits;
        if (!c.weak) ++s.strong_fits;
      } else {
        s.missed.push_back(c.label);
      }
    }
    if (!ruled_out) standing.push_back(std::move(s));
  }
  if (standing.empty()) {
    result.reason = "every GPU model we know is ruled out by them";
    return result;
  }
  std::stable_sort(standing.begin(), standing.end(), [](const Score& a, const Score& b) { return a.fits > b.fits; });
  const int top = standing.front().fits;
  std::vector<Score> fewer;
  for (const Score& s : standing) {
    if (s.fits == top) {
      result.best.push_back(s.model);
    } else {
      result.fewer.push_back(s.model);
      fewer.push_back(s);
    }
  }
  // A lead that rests on the network alone does not decide between GPUs of different compute:
  // the models the GPU's own clues fit as well as the leader's tie with it, unless they are its
  // memory twins.
  if (result.best.size() == 1) {
    const Score& lead = standing.front();
    std::vector<const GpuModel*> even{lead.model};
    for (const Score& s : fewer) {
      if (s.strong_fits == lead.strong_fits && !memory_twins({lead.model, s.model})) even.push_back(s.model);
    }
    if (even.size() > 1) {
      result.best = even;
      result.fewer.erase(std::remove_if(result.fewer.begin(), result.fewer.end(),
                                        [&](const GpuModel* m) { return std::count(even.begin(), even.end(), m) > 0; }),
                         result.fewer.end());
      result.sureness = Sureness::Tied;
      result.reason = fmt::format(
          "{} fit them alike as far as the GPU's own clues go, only the network (a weak clue) favouring {}, and "
          "they differ in {}, which the file does not say",
          and_list(names(even)), lead.model->spec.model, differences(even));
      return result;
    }
  }
  const std::size_t n = clues.size();
  if (result.best.size() == 1) {
    result.model = result.best.front();
    result.sureness = fewer.empty() ? Sureness::Sure : Sureness::Likely;
    result.reason = fewer.empty()
                        ? std::string("sure: every other GPU model we know is ruled out by them")
                        : fmt::format("likely, not sure: it fits {} of {}{}", top, of_clues(n), also_possible(fewer));
    return result;
  }
  if (memory_twins(result.best)) {
    result.model = *std::min_element(result.best.begin(), result.best.end(), [](const GpuModel* a, const GpuModel* b) {
      return a->spec.memory_bytes < b->spec.memory_bytes;
    });
    result.sureness = Sureness::MemoryUnknown;
    result.reason = fmt::format(
        "{} of all but the memory: {} fit alike and differ only in memory, which no topology file states; the least "
        "is taken, so that a plan made for it fits the other{} too{}",
        fewer.empty() ? "sure" : "likely", and_list(names(result.best)), result.best.size() > 2 ? "s" : "",
        also_possible(fewer));
    return result;
  }
  result.sureness = Sureness::Tied;
  result.reason = fmt::format(
      "{}, and they differ in {}, which the file does not say",
      top > 0 ? fmt::format("each fits {} of {}", top, of_clues(n)) : std::string("no clue favours one of them"),
      differences(result.best));
  return result;
}

std::string clue_list(const GpuInference& inference) {
  if (inference.clues.empty()) return "nothing that tells GPU models apart (no sm, NVLink, PCIe link speed or <net>)";
  return text::join(inference.clues);
}

}  // namespace burst::topo::hw
