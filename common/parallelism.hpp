// The vocabulary of distributed attention that every layer shares: the simulator costs it, the
// planner chooses among it, the plan contract records it and the runtime executes it.
//
// Mask: which (query, key) pairs attend. Layout: which tokens a ring rank owns (contiguous;
// zigzag, 2P chunks with rank r holding r and 2P-1-r; striped, token t on rank t mod P).
// RingKind: one flat ring, or a double ring (inner = GPUs of a node, outer = across nodes).
// BackwardMode: K,V circulate with dK,dV (RingAttention), or the query side Q, dO, D, lse
// circulates with dQ one step behind (BurstAttention). CheckpointPolicy: what the forward keeps
// for the backward (see docs/strategies.md).
//
// Each has a canonical spelling (to_string) and a parser that names the field, the valid
// spellings and a did-you-mean on error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace burst {

enum class MaskKind : std::uint8_t { Full, Causal, SlidingWindow, Document };
struct Mask {
  MaskKind kind = MaskKind::Causal;
  std::int64_t window = 0;   // SlidingWindow: a query sees keys q-window < k <= q
  std::int64_t doc_len = 0;  // Document: causal within documents of this many tokens
  friend bool operator==(const Mask&, const Mask&) = default;
};
// "full", "causal", "sliding:W", "document:L" (W, L token counts, e.g. "sliding:4K").
[[nodiscard]] Mask parse_mask(std::string_view text, std::string_view field);
[[nodiscard]] std::string to_string(const Mask& mask);

enum class Layout : std::uint8_t { Contiguous, Zigzag, Striped };
enum class RingKind : std::uint8_t { Flat, Double };
enum class BackwardMode : std::uint8_t { KvRing, QRing };
// none: keep every activation; full: keep only each layer's input and recompute the layer;
// attn_stash: full recompute except attention, whose output and lse are kept (no ring in the
// recompute); seq_stash: keep attention output and lse for the kept fraction of the local
// sequence (the later tokens under a striped layout), recompute attention for the rest only.
enum class CheckpointPolicy : std::uint8_t { None, Full, AttnStash, SeqStash };

[[nodiscard]] const char* to_string(Layout layout);            // "contiguous", "zigzag", "striped"
[[nodiscard]] const char* to_string(RingKind ring);            // "flat", "double"
[[nodiscard]] const char* to_string(BackwardMode backward);    // "kv_ring", "q_ring"
[[nodiscard]] const char* to_string(CheckpointPolicy policy);  // "none", "full", "attn_stash", "seq_stash"

// Parsers: `field` names where the text came from (an option, a JSON pointer) in errors.
[[nodiscard]] Layout parse_layout(std::string_view text, std::string_view field);
[[nodiscard]] RingKind parse_ring_kind(std::string_view text, std::string_view field);
[[nodiscard]] BackwardMode parse_backward_mode(std::string_view text, std::string_view field);
[[nodiscard]] CheckpointPolicy parse_checkpoint_policy(std::string_view text, std::string_view field);
// The policies every strategy family can run (all but seq_stash, burst's own on a striped
// layout), as to_string spells them: what `burst plan --checkpoint` and a plan's
// /job/only_checkpoint accept.
[[nodiscard]] std::vector<std::string> checkpoint_policies_of_every_family();

}  // namespace burst
