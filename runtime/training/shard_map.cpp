// The unit-by-unit shard layout (see shard_map.hpp).
#include "runtime/training/shard_map.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {

ShardMap::ShardMap(std::vector<Slice> units, int ranks) : units_(std::move(units)), ranks_(ranks) {
  if (ranks_ < 1) throw Error(Problem{"ShardMap", fmt::format("{} ranks", ranks_), "at least 1", ""});
  const auto p = static_cast<std::size_t>(ranks_);
  for (const Slice& u : units_) {
    if (u.offset != total_) {
      throw Error(Problem{"ShardMap",
                          fmt::format("a unit starts at float {}, the previous one ends at {}", u.offset, total_),
                          "units tiling the vector in order", ""});
    }
    total_ += u.count;
    piece_.push_back((u.count + p - 1) / p);
    at_.push_back(shard_size_);
    shard_size_ += piece_.back();
  }
}

std::vector<ShardPiece> ShardMap::pieces(int rank) const {
  std::vector<ShardPiece> out;
  const auto r = static_cast<std::size_t>(rank);
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::size_t begin = std::min(units_[u].count, r * piece_[u]);
    const std::size_t end = std::min(units_[u].count, begin + piece_[u]);
    out.push_back({units_[u].offset + begin, end - begin, at_[u]});
  }
  return out;
}

std::vector<float> ShardMap::shard_of(std::span<const float> whole, int rank) const {
  if (whole.size() != total_) {
    throw Error(Problem{"ShardMap::shard_of", fmt::format("{} floats", whole.size()), fmt::format("{}", total_), ""});
  }
  std::vector<float> shard(shard_size_, 0.0f);
  for (const ShardPiece& p : pieces(rank)) {
    std::copy_n(whole.begin() + static_cast<std::ptrdiff_t>(p.flat), p.count,
                shard.begin() + static_cast<std::ptrdiff_t>(p.at));
  }
  return shard;
}

std::vector<float> ShardMap::assemble(std::span<const float> shards) const {
  if (shards.size() != shard_size_ * static_cast<std::size_t>(ranks_)) {
    throw Error(Problem{
        "ShardMap::assemble", fmt::format("{} floats", shards.size()),
        fmt::format("{} ranks x {} = {}", ranks_, shard_size_, shard_size_ * static_cast<std::size_t>(ranks_)), ""});
  }
  std::vector<float> whole(total_);
  for (int r = 0; r < ranks_; ++r) {
    const auto shard = shards.subspan(static_cast<std::size_t>(r) * shard_size_, shard_size_);
    for (const ShardPiece& p : pieces(r)) {
      std::copy_n(shard.begin() + static_cast<std::ptrdiff_t>(p.at), p.count,
                  whole.begin() + static_cast<std::ptrdiff_t>(p.flat));
    }
  }
  return whole;
}

}  // namespace burst::rt
