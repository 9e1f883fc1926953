// Global-norm clipping and the AdamW step (see adamw.hpp for the math).
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
  for (const auto& [name, size] : {std::pair{"grads", r.grads.size()}, std::pair{"m", r.m.size()}, std::pair{"v", r.v.size()}}) {
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
  for (const float g : grads) squares += static_cast<double>(g) * g;
  return squares;
}

void adamw_update(const AdamWRange& range, std::span<const ParamGroup> groups, double norm, std::int64_t step,
                  const AdamWConfig& config) {
  check_range(range, step, config);
  if (config.clip_norm > 0.0f && norm > config.clip_norm) {
    const auto factor = static_cast<float>(config.clip_norm / norm);
    for (float& g : range.grads) g *= factor;
  }
  const double b1 = config.beta1, b2 = config.beta2, lr = config.lr, eps = config.eps;
  const double correction1 = 1.0 - std::pow(b1, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(b2, static_cast<double>(step));
  const std::size_t begin = range.offset, end = range.offset + range.params.size();
  for (const ParamGroup& group : groups) {
    const double decay = group.decay ? config.weight_decay : 0.0;
    const std::size_t from = std::max(begin, group.offset), to = std::min(end, group.offset + group.count);
    for (std::size_t flat = from; flat < to; ++flat) {
      const std::size_t i = flat - begin;
      const double g = range.grads[i];
      const double m = b1 * range.m[i] + (1.0 - b1) * g;
      const double v = b2 * range.v[i] + (1.0 - b2) * g * g;
      range.m[i] = static_cast<float>(m);
      range.v[i] = static_cast<float>(v);
      const double p = range.params[i];
      range.params[i] = static_cast<float>(p - lr * ((m / correction1) / (std::sqrt(v / correction2) + eps) + decay * p));
    }
  }
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
