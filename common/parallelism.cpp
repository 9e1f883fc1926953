// Parsing and printing the shared vocabulary (see parallelism.hpp).
#include "common/parallelism.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace burst {
namespace {

constexpr std::string_view kValidMasks = "full, causal, sliding:W, document:L (W, L in tokens, e.g. sliding:4K)";

[[noreturn]] void bad_mask(std::string_view field, std::string what, std::string hint) {
  throw Error(Problem{std::string(field), std::move(what), std::string(kValidMasks), std::move(hint)});
}

std::int64_t mask_parameter(std::string_view text, std::string_view field, std::string_view kind,
                            std::string_view name) {
  const std::int64_t value = units::parse_tokens(text, field);
  if (value < 1) {
    bad_mask(field, fmt::format("{} of '{}' must be at least 1 token, got {}", name, kind, value),
             fmt::format("write it like \"{}:4K\"", kind));
  }
  return value;
}

// One parser for every enum spelled by a fixed table of names.
template <typename Enum, std::size_t N>
Enum parse_choice(std::string_view text, std::string_view field, std::string_view what,
                  const std::array<std::pair<Enum, const char*>, N>& table) {
  std::vector<std::string> names;
  for (const auto& [value, name] : table) {
    if (text == name) return value;
    names.emplace_back(name);
  }
  throw Error(Problem{std::string(field), fmt::format("unknown {} '{}'", what, text), text::join(names),
                      text::did_you_mean(text, names)});
}

template <typename Enum, std::size_t N>
const char* name_of(Enum value, const std::array<std::pair<Enum, const char*>, N>& table) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

constexpr std::array<std::pair<Layout, const char*>, 3> kLayouts{
    {{Layout::Contiguous, "contiguous"}, {Layout::Zigzag, "zigzag"}, {Layout::Striped, "striped"}}};
constexpr std::array<std::pair<RingKind, const char*>, 2> kRings{
    {{RingKind::Flat, "flat"}, {RingKind::Double, "double"}}};
constexpr std::array<std::pair<BackwardMode, const char*>, 2> kBackwards{
    {{BackwardMode::KvRing, "kv_ring"}, {BackwardMode::QRing, "q_ring"}}};
constexpr std::array<std::pair<CheckpointPolicy, const char*>, 4> kPolicies{
    {{CheckpointPolicy::None, "none"},
     {CheckpointPolicy::Full, "full"},
     {CheckpointPolicy::AttnStash, "attn_stash"},
     {CheckpointPolicy::SeqStash, "seq_stash"}}};

}  // namespace

Mask parse_mask(std::string_view text, std::string_view field) {
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const bool has_parameter = colon != std::string_view::npos;
  const std::string_view parameter = has_parameter ? text.substr(colon + 1) : std::string_view{};
  if (kind == "full" || kind == "causal") {
    if (has_parameter)
      bad_mask(field, fmt::format("'{}' takes no parameter, got '{}'", kind, text), fmt::format("write \"{}\"", kind));
    return Mask{kind == "full" ? MaskKind::Full : MaskKind::Causal, 0, 0};
  }
  if (kind == "sliding" || kind == "document") {
    const bool sliding = kind == "sliding";
    const std::string_view name = sliding ? "the window" : "the document length";
    if (!has_parameter || parameter.empty()) {
      bad_mask(field, fmt::format("'{}' needs {} in tokens", kind, name), fmt::format("write it like \"{}:4K\"", kind));
    }
    const std::int64_t value = mask_parameter(parameter, field, kind, name);
    return sliding ? Mask{MaskKind::SlidingWindow, value, 0} : Mask{MaskKind::Document, 0, value};
  }
  if (text.empty()) bad_mask(field, "empty mask", "write \"causal\" for a decoder");
  bad_mask(field, fmt::format("unknown mask '{}'", text),
           text::did_you_mean(kind, {"full", "causal", "sliding", "document"}));
}

std::string to_string(const Mask& mask) {
  switch (mask.kind) {
    case MaskKind::Full: return "full";
    case MaskKind::Causal: return "causal";
    case MaskKind::SlidingWindow: return "sliding:" + units::format_tokens(mask.window);
    case MaskKind::Document: return "document:" + units::format_tokens(mask.doc_len);
  }
  return "?";
}

const char* to_string(Layout layout) { return name_of(layout, kLayouts); }
const char* to_string(RingKind ring) { return name_of(ring, kRings); }
const char* to_string(BackwardMode backward) { return name_of(backward, kBackwards); }
const char* to_string(CheckpointPolicy policy) { return name_of(policy, kPolicies); }

Layout parse_layout(std::string_view text, std::string_view field) {
  return parse_choice(text, field, "layout", kLayouts);
}
RingKind parse_ring_kind(std::string_view text, std::string_view field) {
  return parse_choice(text, field, "ring kind", kRings);
}
BackwardMode parse_backward_mode(std::string_view text, std::string_view field) {
  return parse_choice(text, field, "backward mode", kBackwards);
}
CheckpointPolicy parse_checkpoint_policy(std::string_view text, std::string_view field) {
  return parse_choice(text, field, "checkpoint policy", kPolicies);
}

std::vector<std::string> checkpoint_policies_of_every_family() {
  std::vector<std::string> names;
  for (const auto& [policy, name] : kPolicies) {
    if (policy != CheckpointPolicy::SeqStash) names.emplace_back(name);
  }
  return names;
}

}  // namespace burst
