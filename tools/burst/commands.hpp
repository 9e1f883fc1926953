// Registration of the CLI subcommands; each lives in its own cmd_*.cpp.
// Handlers throw burst::Error on bad input; only main() turns errors into exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace burst::cli {

void add_topo_command(CLI::App& app);               // burst topo list|show|validate|convert
void add_simulate_command(CLI::App& app);           // burst simulate
void add_bench_command(CLI::App& app);              // burst bench simulate
void add_bench_plan_command(CLI::App& bench);       // burst bench plan (under `bench`)
void add_bench_attention_command(CLI::App& bench);  // burst bench attention (under `bench`)
void add_bench_training_command(CLI::App& bench);   // mpirun ... burst bench training plan.json (under `bench`)
void add_bench_precision_command(CLI::App& bench);
void add_bench_fidelity_command(CLI::App& bench);  // burst bench fidelity (under `bench`)  // mpirun ... burst bench
                                                   // precision plan.json (under `bench`)
void add_plan_command(CLI::App& app);              // burst plan
void add_explain_command(CLI::App& app);           // burst explain plan.json
void add_capacity_command(CLI::App& app);          // burst capacity
void add_whatif_command(CLI::App& app);            // burst whatif --vary ...
void add_report_command(CLI::App& app);            // burst report plan.json -o report.html
void add_export_command(CLI::App& app);            // burst export plan.json --to megatron|nemo|deepspeed|torchtitan
void add_launch_command(CLI::App& app);            // burst launch plan.json [--slurm] [--exec]
void add_run_command(CLI::App& app);               // burst run plan.json --attention-only | --dry-run
void add_calibrate_command(CLI::App& app);         // mpirun -np N burst calibrate: measure the local topology

}  // namespace burst::cli
