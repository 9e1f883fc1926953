// The two breakdowns as ordered JSON objects: every item in declaration order, then "total",
// so plans and reports show where the bytes and the seconds go and that they add up.
#include <array>
#include <utility>

#include "simulator/training/training.hpp"

namespace burst::sim {

Json to_json(const MemoryBreakdown& memory) {
  Json out{{"params", memory.params}};
  if (memory.fp8_weights > 0) out["fp8_weights"] = memory.fp8_weights;  // only FP8 jobs have the item
  const std::array<std::pair<const char*, double>, 8> items{{{"gradients", memory.gradients},
                                                             {"optimizer", memory.optimizer},
                                                             {"activations", memory.activations},
                                                             {"attention_stash", memory.attention_stash},
                                                             {"ring_buffers", memory.ring_buffers},
                                                             {"lm_head", memory.lm_head},
                                                             {"reserve", memory.reserve},
                                                             {"total", memory.total()}}};
  for (const auto& [name, value] : items) out[name] = value;
  return out;
}

Json to_json(const TimeBreakdown& time) {
  return Json{{"dense_compute", time.dense_compute},
              {"elementwise", time.elementwise},
              {"attention_compute", time.attention_compute},
              {"attention_exposed_comm", time.attention_exposed_comm},
              {"recompute", time.recompute},
              {"lm_head", time.lm_head},
              {"zero_exposed_comm", time.zero_exposed_comm},
              {"tp_exposed_comm", time.tp_exposed_comm},
              {"optimizer", time.optimizer},
              {"total", time.total()}};
}

}  // namespace burst::sim
