// The strategy knobs declared once (common/strategy_knobs.hpp): an override sets only what it
// names, and the knob structs compare by value.
#include <catch2/catch.hpp>

#include "common/strategy_knobs.hpp"

using namespace burst;

TEST_CASE("an override changes the knobs it sets and keeps the others", "[common][knobs]") {
  AttentionKnobs knobs;
  knobs.ring = RingKind::Double;
  knobs.dkv_bytes = 4;
  const AttentionKnobs before = knobs;

  AttentionKnobOverrides none;
  none.apply_to(knobs);
  CHECK(knobs == before);

  AttentionKnobOverrides some;
  some.layout = Layout::Striped;
  some.overlap = false;
  some.inner = 4;
  some.apply_to(knobs);
  CHECK(knobs.layout == Layout::Striped);
  CHECK_FALSE(knobs.overlap);
  CHECK(knobs.inner == 4);
  CHECK(knobs.ring == RingKind::Double);  // not named: kept
  CHECK(knobs.dkv_bytes == 4);
  CHECK(knobs.ulysses == 1);
  CHECK(knobs.backward == BackwardMode::QRing);
}

TEST_CASE("training knobs default to full recompute, logits whole, ZeRO-3 on the GPU", "[common][knobs]") {
  const TrainingKnobs t;
  CHECK(t.checkpoint.policy == CheckpointPolicy::Full);
  CHECK(t.checkpoint.kept_fraction == 0);
  CHECK(t.lm_head_chunks == 1);
  CHECK(t.zero.stage == 3);
  CHECK_FALSE(t.zero.offload);
  TrainingKnobs u = t;
  u.zero.offload = true;
  CHECK_FALSE(u == t);
}
