// Parameter counts of a decoder-only transformer (see model_spec.hpp).
#include "common/model_spec.hpp"

namespace burst {

double ModelSpec::layer_params() const {
  const double h = hidden;
  const double q_width = static_cast<double>(heads) * head_dim;
  const double kv_width = static_cast<double>(kv_heads) * head_dim;
  const double attention = h * q_width /* Q */ + 2.0 * h * kv_width /* K,V */ + q_width * h /* O */ +
                           (qkv_bias ? q_width + 2.0 * kv_width : 0.0);
  const double mlp = (gated_mlp ? 3.0 : 2.0) * h * ffn;
  const double norms = 2.0 * h;
  return attention + mlp + norms;
}

double ModelSpec::total_params() const {
  return layers * layer_params() + 2.0 * static_cast<double>(vocab) * hidden + hidden;
}

}  // namespace burst
