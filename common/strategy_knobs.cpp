// What-if overrides of a strategy's attention knobs (strategy_knobs.hpp).
#include "common/strategy_knobs.hpp"

namespace burst {

void AttentionKnobOverrides::apply_to(AttentionKnobs& knobs) const {
  if (ulysses) knobs.ulysses = *ulysses;
  if (ring) knobs.ring = *ring;
  if (inner) knobs.inner = *inner;
  if (layout) knobs.layout = *layout;
  if (backward) knobs.backward = *backward;
  if (overlap) knobs.overlap = *overlap;
}

}  // namespace burst
