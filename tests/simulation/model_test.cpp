// Model presets and Hugging Face config.json import, checked against the public configs and
// NVIDIA NeMo's independent numbers (tests/data/models, origins in its README).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "simulator/models/model.hpp"

using namespace burst;

namespace {

const std::string kModels = std::string(BURST_TEST_DATA) + "/models/";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/burst-model-test-" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("Hugging Face configs import with the numbers NeMo agrees on, and match our presets") {
  // file, preset, layers, hidden, ffn, heads, kv heads, vocab (architecture_crosscheck.csv)
  // and the RoPE base (rope_theta) and Q, K, V biases (Qwen2's architecture has them).
  struct Row {
    const char* file;
    const char* preset;
    int layers, hidden, ffn, heads, kv_heads;
    std::int64_t vocab;
    double rope_base;
    bool qkv_bias;
  };
  const Row rows[] = {
      {"hf_meta-llama_Llama-2-7b-hf_config.json", "llama2-7b", 32, 4096, 11008, 32, 32, 32000, 10000, false},
      {"hf_meta-llama_Meta-Llama-3-8B_config.json", "llama3-8b", 32, 4096, 14336, 32, 8, 128256, 500000, false},
      {"hf_Qwen_Qwen2.5-7B-Instruct_config.json", "qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064, 1000000, true},
      {"hf_Qwen_Qwen2.5-14B-Instruct_config.json", "qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064, 1000000, true},
  };
  for (const auto& row : rows) {
    INFO(row.file);
    const auto m = sim::load_model(kModels + row.file);
    CHECK(m.layers == row.layers);
    CHECK(m.hidden == row.hidden);
    CHECK(m.ffn == row.ffn);
    CHECK(m.heads == row.heads);
    CHECK(m.kv_heads == row.kv_heads);
    CHECK(m.vocab == row.vocab);
    CHECK(m.head_dim == 128);
    CHECK(m.gated_mlp);
    CHECK(m.rope_base == row.rope_base);
    CHECK(m.qkv_bias == row.qkv_bias);
    const auto p = sim::model_preset(row.preset);
    CHECK(p.rope_base == m.rope_base);
    CHECK(p.qkv_bias == m.qkv_bias);
    CHECK(p.layers == m.layers);
    CHECK(p.hidden == m.hidden);
    CHECK(p.ffn == m.ffn);
    CHECK(p.kv_heads == m.kv_heads);
    CHECK(p.vocab == m.vocab);
    CHECK(p.total_params() == Approx(m.total_params()));
  }
}

TEST_CASE("parameter counts match the published model sizes") {
  // Llama-2-7B has 6.74e9 parameters; Meta-Llama-3-8B 8.03e9 (their model cards).
  CHECK(sim::model_preset("llama2-7b").total_params() == Approx(6.74e9).epsilon(0.01));
  CHECK(sim::model_preset("llama3-8b").total_params() == Approx(8.03e9).epsilon(0.01));
  // Qwen2.5-7B-Instruct: 7.61e9 (its model card), Q, K, V biases included.
  CHECK(sim::model_preset("qwen2.5-7b").total_params() == Approx(7.61e9).epsilon(0.01));
}

TEST_CASE("a bad config.json reports every problem with its JSON pointer") {
  const auto path = write_temp("bad.json", R"({"hidden_size": 4096, "num_attention_heads": 32,
      "num_key_value_heads": 5, "num_hidden_layers": 0, "vocab_size": 32000, "hidden_act": "relu"})");
  try {
    (void)sim::load_model(path);
    FAIL("no error");
  } catch (const Error& e) {
    std::vector<std::string> lines;
    for (const auto& p : e.problems()) lines.push_back(p.to_string());
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == path + ":/intermediate_size: missing required field 'intermediate_size' (valid: an integer)");
    CHECK(lines[1] == path + ":/num_hidden_layers: 0 is out of range (valid: 1 to 2147483647)");
    CHECK(lines[2].find(":/hidden_act: unsupported activation 'relu'") != std::string::npos);
    CHECK(lines[3].find(":/num_key_value_heads: 5 KV heads do not divide 32 attention heads") != std::string::npos);
  }
  CHECK_THROWS_WITH(sim::load_model("llama-7b"), Catch::Contains("did you mean 'llama2-7b'?"));
  CHECK_THROWS_WITH(sim::load_model("/nonexistent/config.json"),
                    Catch::Contains("/nonexistent/config.json: no such file"));
}

TEST_CASE("a model's name, from _name_or_path or the file's stem, must be printable") {
  const std::string config = R"("hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
      "num_hidden_layers": 2, "vocab_size": 256)";
  const auto named = write_temp("named.json", "{\"_name_or_path\": \"m\\u001b[31m\", " + config + "}");
  CHECK_THROWS_WITH(sim::load_model(named),
                    named +
                        ":/_name_or_path: 'm\\x1b[31m': byte 2 is a control character (\\x1b) (valid: printable "
                        "text: no control characters, line breaks or tabs; hint: names and messages are written "
                        "into scripts, settings files, reports and terminals)");
  const auto stem = write_temp("x\ntouch PWNED\n.json", "{" + config + "}");
  CHECK_THROWS_WITH(sim::load_model(stem),
                    Catch::Contains("the model is named after the file, 'burst-model-test-x\\ntouch PWNED\\n': byte "
                                    "19 is a control character (\\n)") &&
                        Catch::Contains("hint: rename the file or give the model a name in \"_name_or_path\""));
  std::remove(stem.c_str());
  const auto plain = write_temp("plain-name.json", "{" + config + "}");
  CHECK(sim::load_model(plain).name == "burst-model-test-plain-name");
}
