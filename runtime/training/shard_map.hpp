// Which floats of the flat parameter vector each rank owns under ZeRO.
//
// In this runtime every rank holds a model replica (context parallel and Ulysses share the
// weights), so ZeRO shards over all P ranks. The vector is cut unit by unit (the embedding, each
// layer, the head: ModelLayout::units), not as one block, so that a step can reduce-scatter a
// layer's gradients the moment its backward is done, and all-gather a layer's parameters just
// before it runs: each is one collective over that unit alone. Collectives need equal counts on
// every rank, so a unit of n floats is padded to P * ceil(n / P) and cut into P equal pieces;
// rank r owns piece r:
//
//   unit u:   [ piece 0 | piece 1 | ... | piece P-1 (its tail may be padding) ]
//   rank r's shard = piece r of unit 0, piece r of unit 1, ...   (shard_size() floats)
//
// A shard is the same length on every rank; padding floats are zeros and stay zeros (AdamW
// never visits them: they lie outside every parameter). The same layout serves parameters,
// gradients and both AdamW moments.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "runtime/training/model.hpp"

namespace burst::rt {

// Floats [flat, flat + count) of the flat vector, held at [at, at + count) of a rank's shard.
struct ShardPiece {
  std::size_t flat = 0;
  std::size_t count = 0;
  std::size_t at = 0;
};

class ShardMap {
 public:
  // `units` tile [0, total) in order (ModelLayout::units()); ranks >= 1 (burst::Error otherwise).
  ShardMap(std::vector<Slice> units, int ranks);

  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] std::size_t total() const { return total_; }
  [[nodiscard]] std::size_t shard_size() const { return shard_size_; }
  [[nodiscard]] std::size_t unit_count() const { return units_.size(); }
  [[nodiscard]] const Slice& unit(std::size_t u) const { return units_[u]; }
  // ceil(unit size / ranks): one rank's piece of unit u, padding included.
  [[nodiscard]] std::size_t piece_size(std::size_t u) const { return piece_[u]; }
  // ranks * piece_size(u): what an all-gather of unit u fills and a reduce-scatter reads.
  [[nodiscard]] std::size_t padded_size(std::size_t u) const { return piece_[u] * static_cast<std::size_t>(ranks_); }
  // Where unit u's piece starts in every rank's shard.
  [[nodiscard]] std::size_t piece_at(std::size_t u) const { return at_[u]; }

  // Rank `rank`'s real floats, one piece per unit (count 0 where its piece is all padding).
  [[nodiscard]] std::vector<ShardPiece> pieces(int rank) const;
  // Rank `rank`'s shard of a whole vector (total() floats).
  [[nodiscard]] std::vector<float> shard_of(std::span<const float> whole, int rank) const;
  // The whole vector from every rank's shard, rank after rank (what gather_to_root leaves).
  [[nodiscard]] std::vector<float> assemble(std::span<const float> shards) const;

 private:
  std::vector<Slice> units_;
  int ranks_;
  std::size_t total_ = 0;
  std::vector<std::size_t> piece_, at_;
  std::size_t shard_size_ = 0;
};

}  // namespace burst::rt
