// Shard files and their manifest (see state_shards.hpp).
#include "runtime/training/detail/state_shards.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifestName = "manifest";  // a set's own manifest, in its directory

// N of "<name>.gen<N>-step<S>" (N >= 1, S digits), for `name` the file name of --save; nullopt
// for any other name.
std::optional<std::int64_t> generation_number(std::string_view entry, const std::string& name) {
  const std::string prefix = name + ".gen";
  if (!entry.starts_with(prefix)) return std::nullopt;
  entry.remove_prefix(prefix.size());
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), number);
  const std::string_view rest(end, static_cast<std::size_t>(entry.data() + entry.size() - end));
  const bool step = rest.starts_with("-step") && rest.size() > 5 &&
                    std::all_of(rest.begin() + 5, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (error != std::errc() || number < 1 || !step) return std::nullopt;
  return number;
}

struct GenerationOnDisk {
  std::int64_t number = 0;
  fs::path directory;
  bool complete = false;  // its manifest is written
};

// Every generation of --save `path` on disk, the newest first.
std::vector<GenerationOnDisk> generations_on_disk(const std::string& path) {
  const fs::path target = fs::absolute(path);
  const std::string name = target.filename().string();
  std::vector<GenerationOnDisk> found;
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code is_dir;
    if (!it->is_directory(is_dir)) continue;
    if (const auto number = generation_number(it->path().filename().string(), name)) {
      std::error_code has_manifest;
      found.push_back({*number, it->path(), fs::exists(it->path() / kManifestName, has_manifest)});
    }
  }
  if (ec) {
    throw Error(Problem{path,
                        fmt::format("cannot list the saves in {}: {}", target.parent_path().string(), ec.message()), "",
                        "--save in a directory this process can read"});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.number > b.number; });
  return found;
}

// Member `key` of `object` as text: a string as it is, anything else (a missing one: null) as JSON.
std::string text_of(const Json& object, const char* key) {
  const Json value = object.is_object() && object.contains(key) ? object[key] : Json();
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// meta.zero's integer `key`, or a problem naming `path`.
std::int64_t zero_field(const Json& zero, const char* key, const std::string& path, Problems& problems) {
  const auto it = zero.find(key);
  if (it != zero.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0) return it->get<std::int64_t>();
  problems.add(path, fmt::format("bad ZeRO metadata: 'zero/{}' is {}", key, it == zero.end() ? "missing" : it->dump()),
               "a non-negative integer");
  return -1;
}

struct Whole {
  TrainingState& state;
  std::int64_t ranks, total;
  std::vector<std::pair<std::size_t, std::size_t>> placed;  // (flat offset, count) of every piece put back
};

// Whether the pieces put back cover [0, size) exactly once: no gap (floats left at zero) and no
// overlap (a float written twice), which a count of floats alone would not tell apart.
std::string tiling_fault(std::vector<std::pair<std::size_t, std::size_t>> pieces, std::size_t size) {
  std::sort(pieces.begin(), pieces.end());
  std::size_t next = 0;
  for (const auto& [flat, count] : pieces) {
    if (flat != next) {
      return flat < next ? fmt::format("floats from {} are placed twice", flat)
                         : fmt::format("floats {} to {} are in no shard", next, flat - 1);
    }
    next = flat + count;  // within size: every piece was bounds-checked
  }
  return next == size ? std::string() : fmt::format("floats {} to {} are in no shard", next, size - 1);
}

// Checks that `part` (the shard file `file`) is rank r's of the manifest's save, then puts its
// pieces into the whole state.
void place_shard(Whole& whole, const TrainingState& part, std::int64_t rank, const std::string& file) {
  Problems problems;
  const Json zero = part.meta.contains("zero") ? part.meta["zero"] : Json::object();
  const std::int64_t r = zero_field(zero, "rank", file, problems), ranks = zero_field(zero, "ranks", file, problems);
  const std::int64_t total = zero_field(zero, "total", file, problems);
  problems.throw_if_any();
  const auto mismatch = [&](const char* what, auto got, auto want) {
    if (got != want)
      problems.add(file, fmt::format("{} {}, the manifest says {}", what, got, want), "",
                   "the shards come from different saves: save again");
  };
  mismatch("rank", r, rank);
  mismatch("ranks", ranks, whole.ranks);
  mismatch("total floats", total, whole.total);
  mismatch("step", part.step, whole.state.step);
  mismatch("AdamW step", part.adam_step, whole.state.adam_step);
  const Json pieces = zero.contains("pieces") && zero["pieces"].is_array() ? zero["pieces"] : Json::array();
  // Whether [first, first + count) lies in `size` elements: without computing first + count,
  // which a crafted file can make wrap past 2^64.
  const auto inside = [](std::size_t first, std::size_t count, std::size_t size) {
    return first <= size && count <= size - first;
  };
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Json& p = pieces[i];
    const bool shaped = p.is_array() && p.size() == 3 &&
                        std::all_of(p.begin(), p.end(), [](const Json& x) { return x.is_number_unsigned(); });
    if (!shaped) {
      problems.add(file, fmt::format("bad ZeRO metadata: 'zero/pieces/{}' is {}", i, p.dump()),
                   "[flat offset, count, offset in the shard], non-negative integers");
      continue;
    }
    const auto flat = p[0].get<std::size_t>(), count = p[1].get<std::size_t>(), at = p[2].get<std::size_t>();
    bool fits = inside(flat, count, whole.state.params.size()) && inside(at, count, part.params.size());
    for (const std::vector<float>* moments : {&part.adam_m, &part.adam_v}) {
      fits = fits && (moments->empty() || inside(at, count, moments->size()));
    }
    if (!fits) {
      problems.add(file, fmt::format("piece {} (flat offset {}, {} floats, at {} in the shard) lies outside the state",
                                     i, flat, count, at));
      continue;
    }
    const auto copy = [&](const std::vector<float>& from, std::vector<float>& to) {
      if (!from.empty())
        std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(at), count,
                    to.begin() + static_cast<std::ptrdiff_t>(flat));
    };
    copy(part.params, whole.state.params);
    copy(part.adam_m, whole.state.adam_m);
    copy(part.adam_v, whole.state.adam_v);
    if (count > 0) whole.placed.emplace_back(flat, count);
  }
  problems.throw_if_any();
}

}  // namespace

std::string SaveSet::directory() const { return fmt::format("{}.gen{}-step{}", path, number, step); }

std::string resume_source(const std::string& path) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) return path;
  for (const GenerationOnDisk& g : generations_on_disk(path)) {
    if (g.complete) return (g.directory / kManifestName).string();
  }
  return path;
}

std::int64_t next_generation(const std::string& path) {
  const std::vector<GenerationOnDisk> found = generations_on_disk(path);
  return found.empty() ? 1 : found.front().number + 1;
}

std::string shard_name(int rank, int ranks) { return fmt::format("rank{}-of-{}", rank, ranks); }

void save_shard(const SaveSet& set, const ShardMap& shards, int stage, int rank, TrainingState part) {
  std::error_code ec;
  fs::create_directories(set.directory(), ec);
  if (ec) {
    throw Error(Problem{"--save",
                        fmt::format("{}: cannot make the save's directory: {}", set.directory(), ec.message()),
                        "a file path in a writable directory", ""});
  }
  Json pieces = Json::array();
  for (const ShardPiece& p : shards.pieces(rank)) pieces.push_back({p.flat, p.count, p.at});
  part.meta = {
      {"zero",
       {{"stage", stage}, {"ranks", shards.ranks()}, {"rank", rank}, {"total", shards.total()}, {"pieces", pieces}}}};
  save_training_state((fs::path(set.directory()) / shard_name(rank, shards.ranks())).string(), part);
}

void save_manifest(const SaveSet& set, const ShardMap& shards, int stage, TrainingState header) {
  const std::string directory = fs::path(set.directory()).filename().string();
  Json in_set = Json::array(), beside = Json::array();  // relative to the set's directory, to F's
  for (int r = 0; r < shards.ranks(); ++r) {
    in_set.push_back(shard_name(r, shards.ranks()));
    beside.push_back(directory + "/" + shard_name(r, shards.ranks()));
  }
  header.meta["zero"] = {{"stage", stage},
                         {"ranks", shards.ranks()},
                         {"total", shards.total()},
                         {"files", in_set},
                         {"generation", {{"number", set.number}, {"directory", directory}}}};
  header.params.clear();
  header.adam_m.clear();
  header.adam_v.clear();
  save_training_state((fs::path(set.directory()) / kManifestName).string(), header);
  header.meta["zero"]["files"] = beside;
  save_training_state(set.path, header);  // the flip: from here on F names this set
}

void remove_old_generations(const SaveSet& set, int keep) {
  std::vector<GenerationOnDisk> found;
  try {
    found = generations_on_disk(set.path);
  } catch (const Error& e) {  // the save itself is complete: say what was left, do not fail the run
    fmt::print(stderr, "warning: --keep: old saves not removed: {}\n", e.what());
    return;
  }
  int kept = 0;
  for (const GenerationOnDisk& g : found) {
    if (g.number > set.number) continue;  // not this run's to judge
    if (g.number == set.number || (g.complete && kept < keep)) {
      kept += g.complete ? 1 : 0;
      continue;
    }
    std::error_code ec;
    fs::remove_all(g.directory, ec);
    if (ec) {
      fmt::print(stderr, "warning: --keep: could not remove {}: {}\n", g.directory.string(), ec.message());
    } else if (!g.complete) {
      fmt::print(stderr, "save: removed {}: a save cut short (no manifest), never resumable\n", g.directory.string());
    }
  }
}

std::string describe_saved(const TrainingState& state) {
  if (!state.meta.contains("zero")) return fmt::format("the state after step {}, one file", state.step);
  const Json& zero = state.meta["zero"];
  const std::string generation = zero.contains("generation")
                                     ? fmt::format("generation {} ({}), ", text_of(zero["generation"], "number"),
                                                   text_of(zero["generation"], "directory"))
                                     : std::string();
  return fmt::format("{}the state after step {}, {} shard(s) of a ZeRO-{} save", generation, state.step,
                     text_of(zero, "ranks"), text_of(zero, "stage"));
}

std::vector<std::string> shard_files(const TrainingState& manifest, const std::string& path) {
  // Relative to the manifest's directory: "F.gen<N>-step<S>/rank<r>-of-<P>" in F, "rank<r>-of-<P>"
  // in the set's own manifest, "F.rank<r>-of-<P>" in an older burst's.
  const Json zero = manifest.meta.contains("zero") ? manifest.meta["zero"] : Json::object();
  const Json files = zero.contains("files") ? zero["files"] : Json();
  const Json ranks = zero.contains("ranks") ? zero["ranks"] : Json();
  const bool named = files.is_array() && ranks.is_number_integer() && std::ssize(files) == ranks.get<std::int64_t>() &&
                     std::all_of(files.begin(), files.end(), [](const Json& f) { return f.is_string(); });
  if (!named) {
    throw Error(Problem{path, fmt::format("bad ZeRO metadata: 'zero/files' is {}", files.dump()),
                        fmt::format("{} file names, one per rank", ranks.dump()), ""});
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    // Below the manifest's directory: a name may not climb out of it or start anywhere else.
    const fs::path name(files[i].get<std::string>());
    const bool below = !name.empty() && name.is_relative() &&
                       std::none_of(name.begin(), name.end(), [](const fs::path& part) { return part == ".."; });
    if (!below) {
      throw Error(Problem{path, fmt::format("bad ZeRO metadata: 'zero/files/{}' is {}", i, files[i].dump()),
                          "a file name relative to the manifest's directory, without '..'", ""});
    }
    out.push_back((fs::path(path).parent_path() / name).string());
  }
  return out;
}

TrainingState load_whole_state(const std::string& path, std::uint64_t model_size) {
  return assemble_shards(load_training_state(path), path, model_size);
}

TrainingState assemble_shards(TrainingState state, const std::string& path, std::uint64_t model_size) {
  if (!state.meta.contains("zero")) {
    check_trainable_values(state, path);
    return state;
  }
  Problems problems;
  const std::int64_t ranks = zero_field(state.meta["zero"], "ranks", path, problems);
  const std::int64_t total = zero_field(state.meta["zero"], "total", path, problems);
  problems.throw_if_any();
  // Both sizes are checked against the model before anything is allocated or opened.
  if (static_cast<std::uint64_t>(total) != model_size) {
    problems.add(path,
                 fmt::format("bad ZeRO metadata: 'zero/total' is {} floats, this model has {}", total, model_size),
                 "the model's parameter count", "resume with the model that saved it");
  }
  if (ranks < 1 || ranks > kMaxShardFiles) {
    problems.add(path, fmt::format("bad ZeRO metadata: 'zero/ranks' is {}", ranks),
                 fmt::format("1 to {}", kMaxShardFiles));
  }
  problems.throw_if_any();
  const std::vector<std::string> files = shard_files(state, path);
  const auto n = static_cast<std::size_t>(total);
  state.params.assign(n, 0.0f);
  state.adam_m.assign(n, 0.0f);
  state.adam_v.assign(n, 0.0f);
  Whole whole{state, ranks, total, {}};
  for (std::int64_t r = 0; r < ranks; ++r) {
    const std::string& file = files[static_cast<std::size_t>(r)];
    place_shard(whole, load_training_state(file), r, file);
  }
  if (const std::string fault = tiling_fault(std::move(whole.placed), n); !fault.empty()) {
    throw Error(Problem{path, fmt::format("its {} shards do not tile the {} parameters: {}", ranks, n, fault), "",
                        "the shards come from different saves: save again"});
  }
  check_trainable_values(state, path);
  return state;
}

}  // namespace burst::rt
