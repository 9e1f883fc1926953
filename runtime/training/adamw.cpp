// Global-norm clipping and the AdamW step (see adamw.hpp for the math). The clip factor and the
// element update are runtime/training/hd/adamw_element.hpp's, in double, which the CUDA kernel
// runs in float.
#include "runtime/training/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/training/argument_checks.hpp"
#include "runtime/training/hd/adamw_element.hpp"
#include "runtime/training/hd/rms_norm.hpp"

namespace burst::rt {
namespace {

constexpr std::string_view kCall = "adamw_step";

// Groups sorted by offset must follow one another from 0 to `size`.
void check_groups(Problems& p, std::span<const ParamGroup> groups, std::size_t size) {
  std::vector<ParamGroup> sorted(groups.begin(), groups.end());
  std::ranges::sort(sorted, {}, &ParamGroup::offset);
  std::size_t covered = 0;
  for (const ParamGroup& g : sorted) {
    if (g.offset > covered) {
      p.add(where(kCall, "groups"), fmt::format("parameters [{}, {}) are in no group", covered, g.offset),
            "groups tiling the parameters without gaps or overlaps");
    } else if (g.offset < covered) {
      p.add(where(kCall, "groups"),
            fmt::format("parameters [{}, {}) are in two groups", g.offset, std::min(covered, g.offset + g.count)),
            "groups tiling the parameters without gaps or overlaps");
    }
    covered = std::max(covered, g.offset + g.count);
  }
  if (covered < size) {
    p.add(where(kCall, "groups"), fmt::format("parameters [{}, {}) are in no group", covered, size),
          "groups tiling the parameters without gaps or overlaps");
  } else if (covered > size) {
    p.add(where(kCall, "groups"), fmt::format("groups reach parameter {} but there are {}", covered, size),
          fmt::format("groups within [0, {})", size));
  }
}

void check_config(Problems& p, const AdamWConfig& c) {
  if (!(c.lr >= 0.0f)) p.add(where(kCall, "config.lr"), fmt::format("lr {}", c.lr), "lr >= 0");
  if (!(c.beta1 >= 0.0f && c.beta1 < 1.0f))
    p.add(where(kCall, "config.beta1"), fmt::format("beta1 {}", c.beta1), "0 <= beta1 < 1");
  if (!(c.beta2 >= 0.0f && c.beta2 < 1.0f))
    p.add(where(kCall, "config.beta2"), fmt::format("beta2 {}", c.beta2), "0 <= beta2 < 1");
  if (!(c.eps > 0.0f)) p.add(where(kCall, "config.eps"), fmt::format("eps {}", c.eps), "eps > 0");
  if (!(c.weight_decay >= 0.0f)) {
    p.add(where(kCall, "config.weight_decay"), fmt::format("weight_decay {}", c.weight_decay), "weight_decay >= 0");
  }
}

void check_arguments(std::span<const float> params, std::span<const float> grads, std::span<const ParamGroup> groups,
                     const AdamWState& state, const AdamWConfig& config) {
  Problems p;
  if (grads.size() != params.size()) {
    p.add(where(kCall, "grads"), fmt::format("{} gradients for {} parameters", grads.size(), params.size()),
          "one gradient per parameter");
  }
  for (const auto* moment : {&state.m, &state.v}) {
    if (!moment->empty() && moment->size() != params.size()) {
      p.add(where(kCall, "state"), fmt::format("moments of {} values for {} parameters", moment->size(), params.size()),
            "empty (a new state) or one value per parameter", "was this state made for another model?");
      break;
    }
  }
  check_groups(p, groups, params.size());
  check_config(p, config);
  p.throw_if_any();
}

void check_range(const AdamWRange& r, std::int64_t step, const AdamWConfig& config) {
  constexpr std::string_view call = "adamw_update";
  Problems p;
  for (const auto& [name, size] :
       {std::pair{"grads", r.grads.size()}, std::pair{"m", r.m.size()}, std::pair{"v", r.v.size()}}) {
    if (size != r.params.size()) {
      p.add(where(call, name), fmt::format("{} values for {} parameters", size, r.params.size()), "one per parameter");
    }
  }
  if (step < 1) p.add(where(call, "step"), fmt::format("step {}", step), "1, 2, ...");
  check_config(p, config);
  p.throw_if_any();
}

}  // namespace

double squared_norm(std::span<const float> grads) {
  double squares = 0;
  for (const float g : grads) squares += hd::square_of<double>(g);
  return squares;
}

void adamw_update(const AdamWRange& range, std::span<const ParamGroup> groups, double norm, std::int64_t step,
                  const AdamWConfig& config) {
  check_range(range, step, config);
  const float factor = hd::adamw_clip_factor(norm, config.clip_norm);
  if (factor != 1.0f) {
    for (float& g : range.grads) g *= factor;
  }
  for_each_group_part(range.offset, range.params.size(), groups,
                      [&](const ParamGroup& group, std::size_t first, std::size_t count) {
                        const hd::AdamWScalars<double> scalars = group_scalars<double>(config, group, step);
                        for (std::size_t i = first; i < first + count; ++i) {
                          const hd::AdamWElement next =
                              hd::adamw_element(scalars, range.grads[i], {range.params[i], range.m[i], range.v[i]});
                          range.params[i] = next.param;
                          range.m[i] = next.m;
                          range.v[i] = next.v;
                        }
                      });
}

double adamw_step(std::span<float> params, std::span<float> grads, std::span<const ParamGroup> groups,
                  AdamWState& state, const AdamWConfig& config) {
  check_arguments(params, grads, groups, state, config);
  const double norm = std::sqrt(squared_norm(grads));
  if (state.m.empty()) state.m.assign(params.size(), 0.0f);
  if (state.v.empty()) state.v.assign(params.size(), 0.0f);
  ++state.step;
  adamw_update({0, params, grads, state.m, state.v}, groups, norm, state.step, config);
  return norm;
}

}  // namespace burst::rt
