// What each ZeRO stage holds and communicates (see zero_model.hpp).
#include "runtime/training/zero_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"

namespace burst::rt {
namespace {

int checked_stage(int stage) {
  if (stage < 0 || stage > 3) {
    throw Error(Problem{"plan:/strategy/zero/stage", fmt::format("ZeRO stage {}", stage), "0, 1, 2 or 3", ""});
  }
  return stage;
}

// The moments as the stage keeps them: whole, or this rank's shard; zeros before the first step.
std::vector<float> moments(std::vector<float> whole, const ShardMap& shards, int rank, bool sharded) {
  if (!sharded) return whole.empty() ? std::vector<float>(shards.total(), 0.0f) : whole;
  return whole.empty() ? std::vector<float>(shards.shard_size(), 0.0f) : shards.shard_of(whole, rank);
}

StepKernels& state_readable_by(StepKernels& state, const Communicator& comm,
                               const char* collectives = "ZeRO collectives") {
  if (state.memory().space() == MemorySpace::Device && !comm.reads_device_memory()) {
    throw Error(Problem{
        collectives,
        "the model state is in GPU memory, and the communicator given for its collectives reads host memory only",
        "NCCL between processes, or the loopback's GPU copy",
        "burst run --device cuda does this itself; else offload the state (plan:/strategy/zero/offload)"});
  }
  return state;
}

}  // namespace

ZeroModel::ZeroModel(int stage, bool overlap, const ModelLayout& model, StepKernels& state, Communicator& comm,
                     Communicator& host, MemoryLedger& ledger, std::vector<float> params, AdamWState adam,
                     TensorParallelParts tensor_parallel)
    : stage_(checked_stage(stage)),
      overlap_(overlap),
      shards_(model.units(), comm.size()),
      groups_(model.groups()),
      state_(state_readable_by(state, comm)),
      scratch_(state.memory().space() == MemorySpace::Device ? state : pageable_),
      comm_(comm),
      host_(host),
      ledger_(ledger),
      mine_(shards_.pieces(comm.rank())),
      gathered_(shards_.unit_count()),
      unit_grads_(shards_.unit_count()),
      gathering_(shards_.unit_count()),
      updating_(shards_.unit_count()),
      tensor_parallel_(std::move(tensor_parallel)) {
  if (tensor_parallel_.group != nullptr) {
    (void)state_readable_by(state, *tensor_parallel_.group, "the tensor-parallel group's gradient sums");
  }
  const int rank = comm.rank();
  const DType working = state_.activation_dtype();
  constexpr MemoryUse kParams = MemoryUse::Params, kOptimizer = MemoryUse::Optimizer;
  if (working != DType::F32)
    master_ = upload(stage_ >= 1 ? shards_.shard_of(params, rank) : params, DType::F32, kOptimizer);
  working_ = upload(stage_ >= 3 ? shards_.shard_of(params, rank) : params, working, kParams);
  params = {};
  grads_ = upload(std::vector<float>(stage_ >= 2 ? shards_.shard_size() : shards_.total(), 0.0f), DType::F32,
                  MemoryUse::Gradients);
  m_ = upload(moments(std::move(adam.m), shards_, rank, stage_ >= 1), DType::F32, kOptimizer);
  v_ = upload(moments(std::move(adam.v), shards_, rank, stage_ >= 1), DType::F32, kOptimizer);
  adam_step_ = adam.step;
  const Resident on_host = resident(Column::Host), on_device = resident(Column::Device);
  params_hold_ = ledger_.hold(MemoryUse::Params, on_host.params, on_device.params);
  grads_hold_ = ledger_.hold(MemoryUse::Gradients, on_host.gradients, on_device.gradients);
  adam_hold_ = ledger_.hold(MemoryUse::Optimizer, on_host.optimizer, on_device.optimizer);
}

ZeroModel::StateVector ZeroModel::upload(std::span<const float> values, DType dtype, MemoryUse use) {
  StateVector out;
  out.block = allocating_for(ledger_, use, [&] { return state_.memory().allocate(values.size() * dtype_size(dtype)); });
  out.tensor = {out.block.data(), values.size(), dtype, state_.memory().space()};
  if (!values.empty()) state_.memory().store(values, dtype, out.block.data());
  return out;
}

std::vector<float> ZeroModel::download(const StepTensor& t) {
  std::vector<float> values(t.count);
  if (!values.empty()) state_.memory().load(t.data, t.dtype, values);
  return values;
}

// Host: fp32 parameters (the master copy itself), gradients, m and v. Device: parameters in the
// activation dtype, fp32 gradients (what the step accumulates), and an fp32 master copy of the
// optimizer's share beside m, v, unless the plan offloads the optimizer to the host; nothing
// where a GPU run keeps all of it on the host (DeviceLayout::model_state_on_host).
ZeroModel::Resident ZeroModel::resident(Column column) const {
  const std::size_t moments = m_.tensor.count + v_.tensor.count;
  if (column == Column::Host) {
    return {float_bytes(working_.tensor.count), float_bytes(grads_.tensor.count), float_bytes(moments)};
  }
  const DeviceLayout& layout = ledger_.device_layout();
  const bool offloaded = layout.optimizer_on_host || layout.model_state_on_host;
  return {ledger_.device_bytes(working_.tensor.count, Stored::Activation, MemoryUse::Params),
          ledger_.device_bytes(grads_.tensor.count, Stored::Fp32, MemoryUse::Gradients),
          offloaded ? 0 : float_bytes(moments + m_.tensor.count)};
}

StepTensor ZeroModel::piece(const StepTensor& shard, std::size_t unit) const {
  return shard.part(shards_.piece_at(unit), shards_.piece_size(unit));
}

StepTensor ZeroModel::master_of(const ShardPiece& p) const {
  return separate_master() ? master_.tensor.part(stage_ >= 1 ? p.at : p.flat, p.count)
                           : working_.tensor.part(stage_ >= 3 ? p.at : p.flat, p.count);
}

StepTensor ZeroModel::working_of(const ShardPiece& p) const {
  return separate_master() ? working_.tensor.part(stage_ >= 3 ? p.at : p.flat, p.count) : StepTensor{};
}

StepTensor ZeroModel::grads_of(const ShardPiece& p) const {
  return grads_.tensor.part(stage_ >= 2 ? p.at : p.flat, p.count);
}

Request ZeroModel::start_gather(std::size_t unit) {
  StepBuffer& all = gathered_[unit];
  all = StepBuffer(scratch_, ledger_, MemoryUse::Params, shards_.padded_size(unit));
  Request request;  // timed: a collective may complete as it is posted (a subgroup's does)
  timed([&] { request = comm_.iallgather(buffer_of(piece(working_.tensor, unit)), buffer_of(all.tensor())); },
        collective_s_);
  return request;
}

void ZeroModel::prefetch(std::size_t unit) {
  if (stage_ >= 3 && overlap_ && gathered_[unit].empty()) gathering_[unit] = start_gather(unit);
}

StepTensor ZeroModel::acquire(std::size_t unit) {
  const Slice& u = shards_.unit(unit);
  if (stage_ < 3) {
    finish_update(unit);
    return working_.tensor.part(u.offset, u.count);
  }
  if (gathered_[unit].empty()) gathering_[unit] = start_gather(unit);
  timed([&] { comm_.wait(gathering_[unit]); }, collective_s_);
  return gathered_[unit].tensor().part(0, u.count);
}

void ZeroModel::release(std::size_t unit) {
  comm_.wait(gathering_[unit]);  // a prefetch never acquired: its buffer is not freed under it
  gathered_[unit].clear();
}

void ZeroModel::add_into(const StepTensor& sum, const StepTensor& arrived) {
  state_.memory().accumulate(
      reinterpret_cast<float*>(sum.data),  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 gradients
      arrived.data, DType::F32, arrived.count);
}

void ZeroModel::start_micro_batch(bool first) {
  finish_reduce_scatter();
  accumulating_ = !first;
}

StepTensor ZeroModel::gradients(std::size_t unit) {
  const Slice& u = shards_.unit(unit);
  StepTensor out;
  if (stage_ < 2 && !accumulating_) {
    out = grads_.tensor.part(u.offset, u.count);
  } else if (stage_ < 2) {
    // A later micro-batch: its gradients arrive beside the step's sum so far and are added in
    // gradients_done. (A step that binds a device copy of host gradients hands the copy back
    // over them: adding in place would lose the earlier micro-batches.)
    StepBuffer& part = unit_grads_[unit];
    part = StepBuffer(scratch_, ledger_, MemoryUse::Gradients, u.count, Stored::Fp32);
    out = part.tensor();
  } else {
    StepBuffer& all = unit_grads_[unit];
    all = StepBuffer(scratch_, ledger_, MemoryUse::Gradients, shards_.padded_size(unit), Stored::Fp32);
    out = all.tensor();  // the padding too: the reduce-scatter reads it
  }
  state_.memory().zero(out.data, out.bytes());
  return out.part(0, u.count);
}

void ZeroModel::gradients_done(std::size_t unit) {
  if (stage_ < 2) {
    if (StepBuffer& part = unit_grads_[unit]; !part.empty()) {
      add_into(grads_.tensor.part(shards_.unit(unit).offset, part.size()), part.tensor());
      part.clear();
    }
    return;
  }
  finish_reduce_scatter();
  // After the first micro-batch of a step the shard holds the step's sum so far: this one's
  // arrives beside it and is added once it is complete.
  StepBuffer arriving;
  if (accumulating_) {
    arriving = StepBuffer(scratch_, ledger_, MemoryUse::Gradients, shards_.piece_size(unit), Stored::Fp32);
  }
  const StepTensor into = accumulating_ ? arriving.tensor() : piece(grads_.tensor, unit);
  Request request;  // timed: a collective may complete as it is posted (a subgroup's does)
  timed([&] { request = comm_.ireduce_scatter(buffer_of(unit_grads_[unit].tensor()), buffer_of(into), ReduceOp::Sum); },
        collective_s_);
  reducing_ = Reducing{unit, std::move(arriving), std::move(request)};
  if (!overlap_) finish_reduce_scatter();
}

void ZeroModel::finish_reduce_scatter() {
  if (!reducing_) return;
  timed([&] { comm_.wait(reducing_->request); }, collective_s_);
  if (const StepTensor arrived = reducing_->arriving.tensor(); arrived.count > 0) {
    add_into(piece(grads_.tensor, reducing_->unit), arrived);
  }
  unit_grads_[reducing_->unit].clear();
  reducing_.reset();
}

void ZeroModel::reduce_gradients() {
  finish_reduce_scatter();
  // A sum over one rank is its own gradients: a one-rank job runs no collective (on a GPU the
  // device self communicator would move them through the host).
  if (stage_ < 2 && comm_.size() > 1)
    timed([&] { comm_.allreduce(buffer_of(grads_.tensor), ReduceOp::Sum); }, collective_s_);
  Communicator* group = tensor_parallel_.group;
  if (group == nullptr) return;
  const std::vector<ShardPiece> held = stage_ < 2 ? std::vector{ShardPiece{0, shards_.total(), 0}} : mine_;
  for (const ShardPiece& p : replicated_in(held)) {
    timed([&] { group->allreduce(buffer_of(grads_of(p)), ReduceOp::Sum); }, collective_s_);
  }
}

std::vector<ShardPiece> ZeroModel::replicated_in(const std::vector<ShardPiece>& pieces) const {
  std::vector<ShardPiece> out;
  for (const ShardPiece& p : pieces) {
    for (const Slice& r : tensor_parallel_.replicated) {
      const std::size_t lo = std::max(p.flat, r.offset), hi = std::min(p.flat + p.count, r.offset + r.count);
      if (lo < hi) out.push_back({lo, hi - lo, p.at + (lo - p.flat)});
    }
  }
  return out;
}

// Stage 0 holds every gradient; stages 1-3 sum the shards' squares over the ranks.
double ZeroModel::global_norm() {
  const std::vector<ShardPiece> held = stage_ == 0 ? std::vector{ShardPiece{0, shards_.total(), 0}} : mine_;
  Communicator* group = tensor_parallel_.group;
  std::vector<double> squares{0.0};
  for (const ShardPiece& p : held) {
    if (p.count > 0) squares[0] += state_.squared_norm(grads_of(p));
  }
  if (group != nullptr && group->rank() != 0) {  // tensor-parallel rank 0 counts the replicated tensors
    for (const ShardPiece& p : replicated_in(held)) squares[0] -= state_.squared_norm(grads_of(p));
  }
  if (stage_ > 0) timed([&] { host_.allreduce(std::span<double>(squares), ReduceOp::Sum); }, collective_s_);
  if (group != nullptr) {
    Communicator& host_group = tensor_parallel_.host_group != nullptr ? *tensor_parallel_.host_group : *group;
    timed([&] { host_group.allreduce(std::span<double>(squares), ReduceOp::Sum); }, collective_s_);
  }
  // Rounding in the replicated tensors' subtraction may leave a tiny negative sum; NaN stays NaN
  // (std::max(0.0, NaN) would be 0, and a diverged step would look clean).
  return std::sqrt(squares[0] < 0 ? 0.0 : squares[0]);
}

double ZeroModel::optimizer_step(const AdamWConfig& config) {
  const double norm = global_norm();
  if (!std::isfinite(norm)) return norm;  // every rank sees it (a global norm) and the run stops
  ++adam_step_;
  if (stage_ == 0) {
    const ShardPiece all{0, shards_.total(), 0};
    state_.adamw_update({0, master_of(all), grads_.tensor, m_.tensor, v_.tensor, working_of(all)}, groups_, norm,
                        adam_step_, config);
    return norm;
  }
  for (const ShardPiece& p : mine_) {
    if (p.count == 0) continue;
    state_.adamw_update({p.flat, master_of(p), grads_of(p), m_.tensor.part(p.at, p.count),
                         v_.tensor.part(p.at, p.count), working_of(p)},
                        groups_, norm, adam_step_, config);
  }
  if (stage_ < 3) gather_updated_params();
  return norm;
}

// Stages 1-2 keep whole parameters: every rank's updated pieces, unit by unit. A unit that
// divides evenly is gathered straight into place; otherwise through its padded size. With
// overlap the gathers into place complete when the next step acquires the unit (acquire); a
// padded one completes at once, so at most one padded whole is alive.
void ZeroModel::gather_updated_params() {
  for (std::size_t u = 0; u < shards_.unit_count(); ++u) {
    const ShardPiece& p = mine_[u];
    Updating g;
    g.mine = StepBuffer(scratch_, ledger_, MemoryUse::Params, shards_.piece_size(u));  // never aliases the target
    if (p.count > 0) state_.copy(working_.tensor.part(p.flat, p.count), g.mine.tensor().part(0, p.count));
    const StepTensor whole = working_.tensor.part(shards_.unit(u).offset, shards_.unit(u).count);
    if (whole.count != shards_.padded_size(u))
      g.padded = StepBuffer(scratch_, ledger_, MemoryUse::Params, shards_.padded_size(u));
    timed(
        [&] {
          g.request =
              comm_.iallgather(buffer_of(g.mine.tensor()), buffer_of(g.padded.empty() ? whole : g.padded.tensor()));
        },
        collective_s_);
    const bool now = !overlap_ || !g.padded.empty();  // a padded whole is a unit's size more: not kept waiting
    updating_[u] = std::move(g);
    if (now) finish_update(u);
  }
}

void ZeroModel::finish_update(std::size_t unit) {
  std::optional<Updating>& g = updating_[unit];
  if (!g) return;
  timed([&] { comm_.wait(g->request); }, collective_s_);
  if (!g->padded.empty()) {
    const Slice& u = shards_.unit(unit);
    state_.copy(g->padded.tensor().part(0, u.count), working_.tensor.part(u.offset, u.count));
  }
  g.reset();
}

void ZeroModel::finish_collectives() {
  for (std::size_t u = 0; u < shards_.unit_count(); ++u) finish_update(u);
}

std::vector<float> ZeroModel::whole_of(const StepTensor& held, bool sharded, MemoryUse use) {
  const bool root = comm_.rank() == 0;
  if (!sharded) return root ? download(held) : std::vector<float>();
  const StepBuffer all(scratch_, ledger_, use, root ? held.count * static_cast<std::size_t>(comm_.size()) : 0,
                       held.dtype == DType::F32 ? Stored::Fp32 : Stored::Activation);
  comm_.gather_to_root(buffer_of(held), buffer_of(all.tensor()));
  return root ? shards_.assemble(download(all.tensor())) : std::vector<float>();
}

std::vector<float> ZeroModel::whole_params_on_root() {
  finish_collectives();
  const StepTensor params = separate_master() ? master_.tensor : working_.tensor;
  const bool params_sharded = separate_master() ? stage_ >= 1 : stage_ >= 3;
  return whole_of(params, params_sharded, MemoryUse::Params);
}

std::pair<std::vector<float>, std::vector<float>> ZeroModel::whole_on_root() {
  std::vector<float> params = whole_params_on_root();
  return {std::move(params), whole_of(grads_.tensor, stage_ >= 2, MemoryUse::Gradients)};
}

TrainingState ZeroModel::whole_state_on_root() {
  TrainingState whole;
  whole.params = whole_params_on_root();
  whole.adam_m = whole_of(m_.tensor, stage_ >= 1, MemoryUse::Optimizer);
  whole.adam_v = whole_of(v_.tensor, stage_ >= 1, MemoryUse::Optimizer);
  whole.adam_step = adam_step_;
  return whole;
}

TrainingState ZeroModel::saved_part() {
  finish_collectives();
  TrainingState part;
  if (separate_master()) {
    part.params = download(master_.tensor);
  } else {
    part.params = download(working_.tensor);
    if (stage_ == 1 || stage_ == 2) part.params = shards_.shard_of(part.params, comm_.rank());
  }
  part.adam_m = download(m_.tensor);
  part.adam_v = download(v_.tensor);
  part.adam_step = adam_step_;
  return part;
}

}  // namespace burst::rt
