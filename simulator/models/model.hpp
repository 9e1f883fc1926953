// Transformer model dimensions: what the simulator needs to cost attention and dense layers.
//
// Presets are the models BurstEngine evaluates (burst-7b, burst-14b) and public ones whose
// numbers are cross-checked in tests/data/models (Hugging Face config.json vs NVIDIA NeMo), plus
// tiny ones the CPU runtime trains. head_dim = hidden / heads for all of them. Hugging Face
// config.json files import too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_reader.hpp"
#include "common/model_spec.hpp"

namespace burst::sim {

using burst::ModelSpec;  // common/model_spec.hpp

[[nodiscard]] std::vector<std::string> model_preset_names();
// Throws burst::Error with a did-you-mean for unknown names.
[[nodiscard]] ModelSpec model_preset(std::string_view name);

// A Hugging Face config.json (Llama, Qwen2 and alike): hidden_size, intermediate_size,
// num_attention_heads, num_key_value_heads (default: the heads), num_hidden_layers,
// vocab_size, hidden_act, head_dim (default: hidden / heads). Every problem is reported with
// its JSON pointer.
[[nodiscard]] ModelSpec model_from_hf_config(const std::string& path);
// The same from a parsed document; `source` names it in errors.
[[nodiscard]] ModelSpec model_from_hf_config(const Json& doc, const std::string& source);
// A preset name, or a path to a config.json (anything ending in ".json").
[[nodiscard]] ModelSpec load_model(const std::string& preset_or_file);

}  // namespace burst::sim
