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

}  // namespace

ZeroModel::ZeroModel(int stage, const ModelLayout& model, Communicator& comm, MemoryLedger& ledger,
                     std::vector<float> params, AdamWState adam)
    : stage_(checked_stage(stage)),
      shards_(model.units(), comm.size()),
      groups_(model.groups()),
      comm_(comm),
      ledger_(ledger),
      mine_(shards_.pieces(comm.rank())),
      gathered_(shards_.unit_count()),
      unit_grads_(shards_.unit_count()) {
  params_ = stage_ >= 3 ? shards_.shard_of(params, comm.rank()) : std::move(params);
  grads_.assign(stage_ >= 2 ? shards_.shard_size() : shards_.total(), 0.0f);
  adam_.m = moments(std::move(adam.m), shards_, comm.rank(), stage_ >= 1);
  adam_.v = moments(std::move(adam.v), shards_, comm.rank(), stage_ >= 1);
  adam_.step = adam.step;
  const Resident host = resident(Column::Host), device = resident(Column::Device);
  params_hold_ = ledger_.hold(MemoryUse::Params, host.params, device.params);
  grads_hold_ = ledger_.hold(MemoryUse::Gradients, host.gradients, device.gradients);
  adam_hold_ = ledger_.hold(MemoryUse::Optimizer, host.optimizer, device.optimizer);
}

// Host: fp32 parameters (the master copy itself), gradients, m and v. Device: parameters and
// gradients in the activation dtype, and an fp32 master copy of the optimizer's share beside m, v,
// unless the plan offloads the optimizer to the host; nothing where a GPU run keeps all of it on
// the host (DeviceLayout::model_state_on_host).
ZeroModel::Resident ZeroModel::resident(Column column) const {
  if (column == Column::Host) {
    return {float_bytes(params_.size()), float_bytes(grads_.size()), float_bytes(adam_.m.size() + adam_.v.size())};
  }
  const DeviceLayout& layout = ledger_.device_layout();
  const bool offloaded = layout.optimizer_on_host || layout.model_state_on_host;
  return {ledger_.device_bytes(params_.size(), Stored::Activation, MemoryUse::Params),
          ledger_.device_bytes(grads_.size(), Stored::Activation, MemoryUse::Gradients),
          offloaded ? 0 : float_bytes(adam_.m.size() + adam_.v.size() + adam_.m.size())};
}

std::span<float> ZeroModel::piece(std::vector<float>& shard, std::size_t unit) {
  return std::span<float>(shard).subspan(shards_.piece_at(unit), shards_.piece_size(unit));
}

std::span<float> ZeroModel::params_of(const ShardPiece& p) {
  return std::span<float>(params_).subspan(stage_ >= 3 ? p.at : p.flat, p.count);
}

std::span<float> ZeroModel::grads_of(const ShardPiece& p) {
  return std::span<float>(grads_).subspan(stage_ >= 2 ? p.at : p.flat, p.count);
}

std::span<const float> ZeroModel::acquire(std::size_t unit) {
  if (stage_ < 3) return shards_.unit(unit).of(std::span<const float>(params_));
  TrackedBuffer& all = gathered_[unit];
  all = TrackedBuffer(ledger_, MemoryUse::Params, shards_.padded_size(unit));
  timed([&] { comm_.allgather(std::span<const float>(piece(params_, unit)), all.span()); }, collective_s_);
  return all.span().first(shards_.unit(unit).count);
}

void ZeroModel::release(std::size_t unit) { gathered_[unit].clear(); }

std::span<float> ZeroModel::gradients(std::size_t unit) {
  if (stage_ < 2) return zeroed(grads_, shards_.unit(unit));
  TrackedBuffer& all = unit_grads_[unit];
  all = TrackedBuffer(ledger_, MemoryUse::Gradients, shards_.padded_size(unit));
  return all.span().first(shards_.unit(unit).count);
}

void ZeroModel::gradients_done(std::size_t unit) {
  if (stage_ < 2) return;
  TrackedBuffer& all = unit_grads_[unit];
  timed([&] { comm_.reduce_scatter(std::span<const float>(all.span()), piece(grads_, unit), ReduceOp::Sum); }, collective_s_);
  all.clear();
}

void ZeroModel::reduce_gradients() {
  if (stage_ < 2) timed([&] { comm_.allreduce(std::span<float>(grads_), ReduceOp::Sum); }, collective_s_);
}

double ZeroModel::optimizer_step(const AdamWConfig& config) {
  if (stage_ == 0) return adamw_step(params_, grads_, groups_, adam_, config);
  std::vector<double> squares{0.0};
  for (const ShardPiece& p : mine_) squares[0] += squared_norm(grads_of(p));
  timed([&] { comm_.allreduce(std::span<double>(squares), ReduceOp::Sum); }, collective_s_);
  const double norm = std::sqrt(squares[0]);
  ++adam_.step;
  for (const ShardPiece& p : mine_) {
    adamw_update({p.flat, params_of(p), grads_of(p), std::span<float>(adam_.m).subspan(p.at, p.count),
                  std::span<float>(adam_.v).subspan(p.at, p.count)},
                 groups_, norm, adam_.step, config);
  }
  if (stage_ < 3) gather_updated_params();
  return norm;
}

// Stages 1-2 keep whole parameters: every rank's updated pieces, unit by unit. A unit that
// divides evenly is gathered straight into place; otherwise through its padded size.
void ZeroModel::gather_updated_params() {
  timed([&] {
    for (std::size_t u = 0; u < shards_.unit_count(); ++u) {
      const ShardPiece& p = mine_[u];
      TrackedBuffer mine(ledger_, MemoryUse::Params, shards_.piece_size(u));  // never aliases the target
      std::copy_n(params_of(p).begin(), p.count, mine.data());
      const std::span<float> whole = shards_.unit(u).of(std::span<float>(params_));
      TrackedBuffer padded;
      if (whole.size() != shards_.padded_size(u)) padded = TrackedBuffer(ledger_, MemoryUse::Params, shards_.padded_size(u));
      comm_.allgather(std::span<const float>(mine.span()), padded.empty() ? whole : padded.span());
      if (!padded.empty()) std::copy_n(padded.data(), whole.size(), whole.begin());
    }
  }, collective_s_);
}

std::pair<std::vector<float>, std::vector<float>> ZeroModel::whole_on_root() {
  const bool root = comm_.rank() == 0;
  const auto whole = [&](const std::vector<float>& held, bool sharded) {
    if (!sharded) return root ? held : std::vector<float>();
    std::vector<float> all(root ? held.size() * static_cast<std::size_t>(comm_.size()) : 0);
    comm_.gather_to_root(std::span<const float>(held), std::span<float>(all));
    return root ? shards_.assemble(all) : std::vector<float>();
  };
  return {whole(params_, stage_ >= 3), whole(grads_, stage_ >= 2)};
}

TrainingState ZeroModel::saved_part() const {
  TrainingState part;
  part.params = stage_ == 1 || stage_ == 2 ? shards_.shard_of(params_, comm_.rank()) : params_;
  part.adam_m = adam_.m;
  part.adam_v = adam_.v;
  part.adam_step = adam_.step;
  return part;
}

}  // namespace burst::rt
