// The linear layers' precision, and the FP8 library, as plans, tables and messages spell them
// (training.hpp).
#include <fmt/format.h>

#include "simulator/training/training.hpp"
#include "topologies/hardware.hpp"

namespace burst::sim {

std::string plan_linears(LinearPrecision linears) { return linears == LinearPrecision::Fp8 ? "fp8" : ""; }

LinearPrecision parse_linears(std::string_view text, const std::string& where) {
  if (text.empty() || text == "bf16") return LinearPrecision::Bf16;
  if (text == "fp8") return LinearPrecision::Fp8;
  throw Error(Problem{where, fmt::format("'{}' linear layers", text), "fp8, or none: the job's dtype", ""});
}

std::string_view to_string(Fp8Library library) {
  return library == Fp8Library::Torchao ? "torchao" : "transformer-engine";
}

Fp8Library parse_fp8_library(std::string_view text, const std::string& where) {
  for (const Fp8Library library : {Fp8Library::TransformerEngine, Fp8Library::Torchao}) {
    if (text == to_string(library)) return library;
  }
  throw Error(Problem{where, fmt::format("'{}' FP8 library", text), "transformer-engine or torchao", ""});
}

std::optional<Problem> fp8_linears_problem(const topo::GpuSpec& gpu, const std::string& where) {
  if (topo::hw::fp8_over_bf16(gpu.model) > 0) return std::nullopt;
  return Problem{where, fmt::format("{} has no FP8 tensor cores", gpu.model),
                 "a GPU of compute capability 8.9 or later (Ada, Hopper)",
                 "Ampere and earlier have none, and a GPU model burst's table lacks counts as none"};
}

}  // namespace burst::sim
