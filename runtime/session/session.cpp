// The decisions of a run between the plan and its report (see session.hpp).
#include "runtime/session/session.hpp"

#include <algorithm>
#include <span>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/kernel_paths.hpp"
#include "runtime/schedule/nccl_op_list.hpp"

namespace burst::rt {
namespace {

bool trains(const RunRequest& r) { return r.kind == RunKind::Training; }

// Training runs on the CPU unless the request asks for cuda; attention runs default to a
// visible GPU.
bool trains_on_cpu(const RunRequest& r) { return trains(r) && r.device != "cuda"; }

// The plan with --kernel-path in place of its /job/kernel_path, and --dtype in place of its
// /job/dtype (and, for fp32, of its travelling accumulators' bf16: an fp32 run is fp32
// throughout); rank 0 says what changed.
plan::Plan as_requested(plan::Plan p, const RunRequest& r, const Communicator& comm) {
  const auto say = [&](const std::string& option, const char* pointer, const std::string& from, const std::string& to) {
    if (comm.rank() == 0 && from != to) fmt::print(stderr, "note: {}: {} {} -> {}\n", option, pointer, from, to);
  };
  if (r.kernel_path != kernel_paths::kAuto) {  // the plan's path unless one is asked for by name
    say("--kernel-path " + r.kernel_path, "/job/kernel_path", p.job.kernel_path, r.kernel_path);
    p.job.kernel_path = r.kernel_path;
  }
  if (r.dtype.empty()) return p;
  const auto override_field = [&](const char* pointer, const std::string& from, const std::string& to) {
    say("--dtype " + r.dtype, pointer, from, to);
  };
  override_field("/job/dtype", p.job.dtype, r.dtype);
  p.job.dtype = r.dtype;
  if (r.dtype == "fp32") {
    override_field("/strategy/dq_bytes", std::to_string(p.strategy.dq_bytes), "4");
    override_field("/strategy/dkv_bytes", std::to_string(p.strategy.dkv_bytes), "4");
    p.strategy.dq_bytes = p.strategy.dkv_bytes = 4;
  }
  return p;
}

// Whether the ring's transfers go over NCCL; rank 0 says how they travel. On cuda the ring's
// blocks live in GPU memory, which the job's communicator (MPI, host memory) cannot read: a job
// of several processes needs NCCL, and a loopback job copies GPU to GPU itself. host is the
// CPU's transport, and nccl needs cuda.
bool use_nccl(const RunRequest& r, Device device, const Communicator& comm) {
  const auto refuse = [](const std::string& what, const char* valid) {
    throw Error(Problem{"--transport", what, valid, ""});
  };
  if (device != Device::Cuda) {
    if (r.transport == "nccl")
      refuse("nccl cannot carry this run: it moves GPU memory: it needs --device cuda", "host");
    return false;
  }
  if (r.loopback) {
    if (r.transport == "nccl")
      refuse("nccl cannot make two ranks of one GPU: --loopback copies the ring's blocks GPU to GPU itself", "host");
    if (comm.rank() == 0)
      fmt::print(stderr, "transport: loopback, the ring's blocks copied GPU to GPU between the rank threads\n");
    return false;
  }
  if (comm.size() == 1) return false;  // a ring of one: no transfers
  if (r.transport == "host") {
    refuse(
        "host cannot carry a cuda run: the ring's blocks live in GPU memory, which the job's communicator does not "
        "read",
        "nccl");
  }
  const std::string nccl_version = nccl_build_version();
  if (nccl_version.empty()) {
    throw Error(Problem{"--device",
                        "cuda over several processes needs NCCL for the ring's GPU blocks, and this build has none", "",
                        "build with the CUDA toolkit's NCCL, run --device cpu, or --loopback on one GPU"});
  }
  if (comm.rank() == 0) {
    fmt::print(stderr, "transport: nccl {} for the ring's transfers (collectives over the job's communicator)\n",
               nccl_version);
  }
  return true;
}

}  // namespace

Device requested_device(const RunRequest& request) {
  return trains_on_cpu(request) ? Device::Cpu : choose_device(request.device, probe_gpus(), "--device");
}

Session::Session(plan::Plan plan, Communicator& comm, RunRequest request)
    : plan_(as_requested(std::move(plan), request, comm)), comm_(comm), request_(std::move(request)) {
  const Device device = trains_on_cpu(request_) ? Device::Cpu
                                                : job_device(request_.device, comm_,
                                                             request_.deterministic ? ", deterministic kernels" : "");
  if (device == Device::Cpu && plan_.job.kernel_path != kernel_paths::kAuto) {
    const bool asked = request_.kernel_path != kernel_paths::kAuto;
    throw Error(Problem{
        asked ? "--kernel-path" : "/job/kernel_path",
        fmt::format("'{}' chooses the CUDA kernels' implementation; this run is on the CPU", plan_.job.kernel_path),
        "with --device cuda", asked ? "" : "or re-plan without --kernel-path"});
  }
  if (trains(request_)) {
    prepare_training(device);
  } else {
    prepare_attention(device);
  }
}

Session::~Session() = default;

void Session::prepare_attention(Device device) {
  require_runnable_job(plan_, comm_.size());
  // A loopback job's ranks share the first GPU.
  attention_kernels_ = make_attention_kernels(device, request_.loopback ? 0 : comm_.local_rank(),
                                              request_.deterministic, request_.trace, plan_.job.kernel_path);
  order_messages_on(comm_, *attention_kernels_);  // the GPU loopback's copies ordered on the kernels' stream
  attention_options_.seed = request_.seed;
  attention_options_.check = request_.check;
  attention_options_.dry_run = request_.kind == RunKind::DryRun;
  attention_options_.warmups = attention_options_.dry_run ? 0 : 1;
  attention_options_.repeats = attention_options_.dry_run ? 1 : request_.repeat;
  attention_options_.kernels = attention_kernels_.get();
  prepared_ =
      std::make_unique<PreparedRun>(prepare_attention_run(plan_, comm_.size(), attention_options_, comm_.rank()));
  over_nccl_ = use_nccl(request_, device, comm_);
}

void Session::prepare_training(Device device) {
  TrainingOptions options = request_.training;
  options.check = request_.check;
  options.seed = request_.seed;
  if (device == Device::Cuda) {
    // A loopback job's ranks share the first GPU, as its attention runs do.
    const int gpu = request_.loopback ? 0 : comm_.local_rank();
    step_kernels_ = make_step_kernels(device, gpu, request_.deterministic);
    attention_kernels_ =
        make_step_attention_kernels(device, *step_kernels_, gpu, request_.deterministic, plan_.job.kernel_path);
    order_messages_on(comm_, *step_kernels_);  // the GPU loopback's copies ordered on the step's stream
    options.backend.step = step_kernels_.get();
    options.backend.attention = attention_kernels_.get();
    const int gpus = std::max(1, probe_gpus().count);
    options.ranks_per_device = request_.loopback ? comm_.size() : (comm_.local_size() + gpus - 1) / gpus;
  }
  if (use_nccl(request_, device, comm_)) {  // each ring of the step over NCCL, made by the step on its first run
    options.backend.ring_transport = [&comm = comm_, &kernels = *attention_kernels_, plan = plan_](std::int64_t seq) {
      return make_nccl_transport(comm, NcclOpLists(plan, seq, RingSchedule::context_of(plan, comm.rank())), kernels);
    };
  }
  if (device == Device::Cuda && plan_.strategy.zero.offload) {
    options.host_state_memory = [] { return make_host_state_memory(Device::Cuda); };  // page-locked
  }
  if (device == Device::Cuda && request_.loopback) {
    // Groups of the ranks on the one GPU: loopback sub-jobs (the whole job's copy reads GPU memory itself)
    options.device_collectives = [&comm = comm_, &kernels = *step_kernels_](Communicator& group,
                                                                            std::span<const int> members) {
      return make_loopback_device_collectives(comm, group, members, kernels);
    };
  } else if (device == Device::Cuda) {
    // ZeRO's collectives on a GPU-resident state and the tensor-parallel group's over NCCL
    options.device_collectives = [&kernels = *step_kernels_](Communicator& group, std::span<const int>) {
      return make_device_collectives(group, kernels);
    };
  }
  training_ = std::make_unique<TrainingRun>(plan_, comm_, std::move(options));
}

std::optional<RunReport> Session::run() {
  if (training_) {
    std::optional<TrainingReport> report = training_->run();
    if (!report) return std::nullopt;
    return RunReport(std::move(*report));
  }
  if (over_nccl_) {
    const plan::Plan as_run = plan_as_run(*prepared_);
    nccl_ = make_nccl_transport(comm_, NcclOpLists(as_run, as_run.job.seq, prepared_->schedule.context()),
                                *attention_kernels_);
  }
  std::optional<AttentionReport> report =
      run_attention(*prepared_, over_nccl_ ? *nccl_ : comm_, attention_options_, request_.trace ? &trace_ : nullptr);
  if (!report) return std::nullopt;
  return RunReport(std::move(*report));
}

}  // namespace burst::rt
