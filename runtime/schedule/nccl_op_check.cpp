// Pairing, progress and data checks over every rank's NCCL op list (see nccl_op_check.hpp).
#include "runtime/schedule/detail/nccl_op_check.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace burst::rt {
namespace {

constexpr std::size_t kMaxLinesPerKind = 20;

// Lines of one kind of problem, the first kMaxLinesPerKind kept and the rest counted.
class ProblemLines {
 public:
  void add(std::string line) {
    if (kept_.size() < kMaxLinesPerKind) {
      kept_.push_back(std::move(line));
    } else {
      ++dropped_;
    }
  }
  void append_to(std::vector<std::string>& out, std::string_view kind) const {
    out.insert(out.end(), kept_.begin(), kept_.end());
    if (dropped_ > 0) out.push_back(fmt::format("... and {} more {} problems", dropped_, kind));
  }
  [[nodiscard]] bool empty() const { return kept_.empty(); }

 private:
  std::vector<std::string> kept_;
  std::size_t dropped_ = 0;
};

// "group 5 (read ring (flat), step 2)"
std::string group_name(const NcclOpList& list, int group) {
  const NcclGroup& g = list[static_cast<std::size_t>(group)];
  return fmt::format("group {} ({}, step {})", group, to_string(g.comm), g.step);
}

// "kv block 1, 2048 bytes bf16"
std::string op_name(const NcclOp& op) {
  return fmt::format("{}, {} bytes {}", describe_payload(op), op.bytes, to_string(op.dtype));
}

// One operation as the checks see it, flattened out of its group.
struct FlatOp {
  int group = 0, op = 0;  // where it sits in the rank's list
  int peer = 0;
  int partner = -1;  // the group of its partner in the peer's list; -1 while unpaired
  NcclDirection direction = NcclDirection::Send;
};

// A rank's operations to or from one peer on one communicator, in posting order: NCCL pairs
// the k-th of a send stream with the k-th of the peer's receive stream.
struct Stream {
  int comm = 0;
  int peer = 0;
  NcclDirection direction = NcclDirection::Send;
  std::vector<int> ops;  // indices into the rank's flat operations
};

// A rank's list flattened: group g's operations are ops[first[g] .. first[g + 1]).
struct FlatList {
  std::vector<FlatOp> ops;
  std::vector<int> first;
  std::vector<Stream> streams;
  [[nodiscard]] int groups() const { return static_cast<int>(first.size()) - 1; }
};

FlatList flatten(const NcclOpList& list) {
  FlatList flat;
  std::size_t ops = 0;
  for (const NcclGroup& g : list) ops += g.ops.size();
  flat.ops.reserve(ops);
  flat.first.reserve(list.size() + 1);
  for (std::size_t g = 0; g < list.size(); ++g) {
    flat.first.push_back(static_cast<int>(flat.ops.size()));
    const int comm = comm_index(list[g].comm);
    for (std::size_t i = 0; i < list[g].ops.size(); ++i) {
      const NcclOp& op = list[g].ops[i];
      auto it = std::find_if(flat.streams.begin(), flat.streams.end(), [&](const Stream& s) {
        return s.comm == comm && s.peer == op.peer && s.direction == op.direction;
      });
      if (it == flat.streams.end())
        it = flat.streams.insert(flat.streams.end(), Stream{comm, op.peer, op.direction, {}});
      it->ops.push_back(static_cast<int>(flat.ops.size()));
      flat.ops.push_back({static_cast<int>(g), static_cast<int>(i), op.peer, -1, op.direction});
    }
  }
  flat.first.push_back(static_cast<int>(flat.ops.size()));
  return flat;
}

// Every rank's list, flattened, read by the pairing and the progress checks.
class JobLists {
 public:
  explicit JobLists(std::span<const NcclOpList> lists) : lists_(lists) {
    for (const NcclOpList& list : lists) flat_.push_back(flatten(list));
  }

  [[nodiscard]] int size() const { return static_cast<int>(lists_.size()); }
  [[nodiscard]] const FlatList& flat(int rank) const { return flat_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] const NcclOpList& list(int rank) const { return lists_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] const NcclOp& op(int rank, const FlatOp& f) const {
    return list(rank)[static_cast<std::size_t>(f.group)].ops[static_cast<std::size_t>(f.op)];
  }

  // (a): pairs every send stream with its peer's receive stream, operation by operation,
  // recording each operation's partner group.
  void pair(ProblemLines& report) {
    for (int r = 0; r < size(); ++r) {
      for (const Stream& s : flat(r).streams) {
        if (s.peer < 0 || s.peer >= size()) {
          const FlatOp& f = flat(r).ops[static_cast<std::size_t>(s.ops.front())];
          report.add(fmt::format("rank {}: {} in its {} names peer {}, not a rank of the job ({} ranks)", r,
                                 f.direction == NcclDirection::Send ? "a send" : "a receive",
                                 group_name(list(r), f.group), s.peer, size()));
          continue;
        }
        const auto& theirs = flat(s.peer).streams;
        const auto other = std::find_if(theirs.begin(), theirs.end(), [&](const Stream& t) {
          return t.comm == s.comm && t.peer == r && t.direction != s.direction;
        });
        if (s.direction == NcclDirection::Send) {
          pair(r, s, other == theirs.end() ? nullptr : &*other, report);
        } else if (other == theirs.end()) {
          unmatched(r, s, 0, report);
        }
      }
    }
  }

  [[nodiscard]] bool all_paired() const {
    return std::all_of(flat_.begin(), flat_.end(), [](const FlatList& f) {
      return std::all_of(f.ops.begin(), f.ops.end(), [](const FlatOp& op) { return op.partner >= 0; });
    });
  }

  // (b): every rank runs its groups one at a time; a group completes once each partner's group
  // has been reached. `reached[r]` is the group rank r is in (its group count once done),
  // `missing[r]` how many of that group's operations still wait for their partner's group.
  void simulate(ProblemLines& report) const {
    std::vector<int> reached(static_cast<std::size_t>(size()), -1), missing(static_cast<std::size_t>(size()), 0);
    std::vector<int> ready;  // ranks whose group has completed
    // Rank r enters group g: partners already there stop waiting for it; partners not there yet
    // keep r waiting.
    const auto enter = [&](int r, int g) {
      reached[static_cast<std::size_t>(r)] = g;
      const FlatList& f = flat(r);
      if (g == f.groups()) return;
      for (int i = f.first[static_cast<std::size_t>(g)]; i < f.first[static_cast<std::size_t>(g) + 1]; ++i) {
        const FlatOp& op = f.ops[static_cast<std::size_t>(i)];
        if (op.peer == r && op.partner == g) continue;
        const int there = reached[static_cast<std::size_t>(op.peer)];
        if (there == op.partner) {
          if (--missing[static_cast<std::size_t>(op.peer)] == 0) ready.push_back(op.peer);
        } else if (there < op.partner) {
          ++missing[static_cast<std::size_t>(r)];
        }
      }
      if (missing[static_cast<std::size_t>(r)] == 0) ready.push_back(r);
    };
    for (int r = 0; r < size(); ++r) enter(r, 0);
    while (!ready.empty()) {
      const int r = ready.back();
      ready.pop_back();
      if (reached[static_cast<std::size_t>(r)] < flat(r).groups()) enter(r, reached[static_cast<std::size_t>(r)] + 1);
    }
    int stuck = 0;
    for (int r = 0; r < size(); ++r) {
      const int g = reached[static_cast<std::size_t>(r)];
      const FlatList& f = flat(r);
      if (g == f.groups()) continue;
      ++stuck;
      for (int i = f.first[static_cast<std::size_t>(g)]; i < f.first[static_cast<std::size_t>(g) + 1]; ++i) {
        const FlatOp& waiting = f.ops[static_cast<std::size_t>(i)];
        const int there = reached[static_cast<std::size_t>(waiting.peer)];
        if (there >= waiting.partner) continue;
        const bool send = waiting.direction == NcclDirection::Send;
        report.add(fmt::format(
            "no progress: rank {} waits in its {} with its {} of {} {} rank {}, whose partner is in rank {}'s "
            "{}, but rank {} waits in its {}",
            r, group_name(list(r), g), send ? "send" : "receive", describe_payload(op(r, waiting)),
            send ? "to" : "from", waiting.peer, waiting.peer, group_name(list(waiting.peer), waiting.partner),
            waiting.peer, group_name(list(waiting.peer), there)));
        break;
      }
    }
    if (stuck > 0) report.add(fmt::format("no progress: {} of {} ranks never finish their lists", stuck, size()));
  }

 private:
  // Pairs send stream `s` of rank `src` with the peer's receive stream `receives` (may be null).
  void pair(int src, const Stream& s, const Stream* receives, ProblemLines& report) {
    const std::size_t both = receives == nullptr ? 0 : std::min(s.ops.size(), receives->ops.size());
    for (std::size_t k = 0; k < both; ++k) {
      FlatOp& send = flat_[static_cast<std::size_t>(src)].ops[static_cast<std::size_t>(s.ops[k])];
      FlatOp& recv = flat_[static_cast<std::size_t>(s.peer)].ops[static_cast<std::size_t>(receives->ops[k])];
      send.partner = recv.group;
      recv.partner = send.group;
      const NcclOp &sent = op(src, send), &received = op(s.peer, recv);
      const char* differ = sent.bytes != received.bytes                                       ? "bytes"
                           : sent.dtype != received.dtype                                     ? "dtypes"
                           : sent.channel != received.channel || sent.block != received.block ? "payloads"
                                                                                              : nullptr;
      if (differ == nullptr) continue;
      report.add(
          fmt::format("{}: rank {}'s send #{} to rank {} ({}: {}) meets rank {}'s receive #{} from rank {} ({}: {}): "
                      "the {} differ",
                      to_string(list(src)[static_cast<std::size_t>(send.group)].comm), src, k + 1, s.peer,
                      group_name(list(src), send.group), op_name(sent), s.peer, k + 1, src,
                      group_name(list(s.peer), recv.group), op_name(received), differ));
    }
    if (s.ops.size() > both) unmatched(src, s, both, report);
    if (receives != nullptr && receives->ops.size() > both) unmatched(s.peer, *receives, both, report);
  }

  // Operations of stream `s` on `rank` from index `first` on have no partner.
  void unmatched(int rank, const Stream& s, std::size_t first, ProblemLines& report) const {
    const FlatOp& f = flat(rank).ops[static_cast<std::size_t>(s.ops[first])];
    const bool send = s.direction == NcclDirection::Send;
    report.add(fmt::format(
        "{}: rank {} {} {} messages {} rank {}, which posts only {} matching {}: {} #{} ({}: {}) has no partner",
        to_string(list(rank)[static_cast<std::size_t>(f.group)].comm), rank, send ? "sends" : "receives", s.ops.size(),
        send ? "to" : "from", s.peer, first, send ? "receives" : "sends", send ? "send" : "receive", first + 1,
        group_name(list(rank), f.group), op_name(op(rank, f))));
  }

  std::span<const NcclOpList> lists_;
  std::vector<FlatList> flat_;
};

// (c): a forwarding send needs its payload received in an earlier group of the same rank.
void check_data(std::span<const NcclOpList> lists, ProblemLines& report) {
  for (std::size_t r = 0; r < lists.size(); ++r) {
    const NcclOpList& list = lists[r];
    int blocks = 1;
    for (const NcclGroup& g : list) {
      for (const NcclOp& op : g.ops) blocks = std::max(blocks, op.block + 1);
    }
    // The group of the latest receive of each (channel, block), -1 before the first.
    std::vector<int> received(static_cast<std::size_t>(kChannelCount * blocks), -1);
    const auto slot = [&](const NcclOp& op) {
      return static_cast<std::size_t>(static_cast<int>(op.channel) * blocks + std::max(op.block, 0));
    };
    const auto same_payload = [](const NcclOp& a, const NcclOp& b) {
      return a.channel == b.channel && a.block == b.block;
    };
    for (std::size_t g = 0; g < list.size(); ++g) {
      for (const NcclOp& op : list[g].ops) {
        if (op.direction != NcclDirection::Send || !op.forwards || received[slot(op)] >= 0) continue;
        const auto receives_it = [&](const NcclGroup& group) {
          return std::any_of(group.ops.begin(), group.ops.end(), [&](const NcclOp& o) {
            return o.direction == NcclDirection::Recv && same_payload(o, op);
          });
        };
        std::string why = "but never receives it";
        if (receives_it(list[g])) {
          why = "in the same group that receives it (NCCL gives no order inside a group)";
        } else {
          for (std::size_t later = g + 1; later < list.size(); ++later) {
            if (receives_it(list[later])) {
              why = fmt::format("before it receives it in its {}", group_name(list, static_cast<int>(later)));
              break;
            }
          }
        }
        report.add(fmt::format("rank {} forwards {} to rank {} in its {} {}", r, describe_payload(op), op.peer,
                               group_name(list, static_cast<int>(g)), why));
      }
      for (const NcclOp& op : list[g].ops) {
        if (op.direction == NcclDirection::Recv) received[slot(op)] = static_cast<int>(g);
      }
    }
  }
}

}  // namespace

std::vector<std::string> check_nccl_op_lists(std::span<const NcclOpList> lists) {
  std::vector<std::string> problems;
  JobLists job(lists);
  ProblemLines pairing;
  job.pair(pairing);
  pairing.append_to(problems, "pairing");
  if (job.all_paired()) {
    ProblemLines progress;
    job.simulate(progress);
    progress.append_to(problems, "progress");
  }
  ProblemLines data;
  check_data(lists, data);
  data.append_to(problems, "data");
  return problems;
}

}  // namespace burst::rt
