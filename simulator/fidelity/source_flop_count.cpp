// The FLOP counts published TFLOP/s are made of (source_flop_count.hpp).
#include "simulator/fidelity/source_flop_count.hpp"

#include <stdexcept>

#include "common/error.hpp"

namespace burst::sim {

std::string_view to_string(FlopCount count) {
  switch (count) {
    case FlopCount::Nemo: return "nemo";
  }
  throw std::logic_error("unknown FlopCount");
}

FlopCount parse_flop_count(const std::string& text, const std::string& where) {
  if (text == to_string(FlopCount::Nemo)) return FlopCount::Nemo;
  throw Error(Problem{where, "unknown FLOP count '" + text + "'", "nemo (NeMo's model-FLOP formula)", ""});
}

double source_flops_per_token(FlopCount count, const ModelSpec& model, double seq) {
  switch (count) {
    case FlopCount::Nemo: {
      const double h = model.hidden, layers = model.layers;
      const double mlp = model.gated_mlp ? 18.0 : 12.0;
      return layers * h * h *
             (12 + 12.0 * model.kv_heads / model.heads + mlp * model.ffn / h + 12 * seq / h +
              6.0 * static_cast<double>(model.vocab) / (layers * h));
    }
  }
  throw std::logic_error("unknown FlopCount");
}

}  // namespace burst::sim
