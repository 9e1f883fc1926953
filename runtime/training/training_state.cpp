// The training-state file (see training_state.hpp).
#include "runtime/training/training_state.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

#include <boost/crc.hpp>
#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace burst::rt {
namespace {

constexpr std::int64_t kMaxFloats = std::int64_t{1} << 50;  // a header length beyond this is nonsense
constexpr std::string_view kVersion1Magic = "burst.training_state/1\n";
constexpr std::string_view kChecksumPrefix = "crc32 ";
constexpr std::size_t kChecksumLineSize = kChecksumPrefix.size() + 8 + 1;  // "crc32 " 8 hex digits "\n"

// The CRC-32 the checksum line carries: of the magic and header lines, then of the body.
std::uint32_t state_crc32(std::string_view magic_and_header, std::string_view body) {
  boost::crc_32_type crc;
  crc.process_bytes(magic_and_header.data(), magic_and_header.size());
  crc.process_bytes(body.data(), body.size());
  return crc.checksum();
}

void append_floats(std::string& body, std::span<const float> values) {
  for (const float value : values) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    for (int byte = 0; byte < 4; ++byte) body.push_back(static_cast<char>((bits >> (8 * byte)) & 0xffU));
  }
}

// Decodes the first n floats of `body` and drops them from it.
std::vector<float> take_floats(std::string_view& body, std::int64_t n) {
  std::vector<float> values(n);
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t bits = 0;
    for (int byte = 0; byte < 4; ++byte) {
      bits |= std::uint32_t{static_cast<unsigned char>(body[4 * i + byte])} << (8 * byte);
    }
    values[i] = std::bit_cast<float>(bits);
  }
  body.remove_prefix(4 * n);
  return values;
}

// m and v are empty (no step taken yet) or as long as params.
void check_moment_lengths(const std::string& path, const std::string& prefix, std::int64_t params, std::int64_t m,
                          std::int64_t v, Problems& problems) {
  for (const auto& [name, length] : {std::pair{"adam_m", m}, std::pair{"adam_v", v}}) {
    if (length != 0 && length != params) {
      problems.add(path, fmt::format("{}{} holds {} floats but params holds {}", prefix, name, length, params),
                   fmt::format("0 or {}", params));
    }
  }
}

// The header's integer field `key` in [0, max], or nullopt with a problem.
std::optional<std::int64_t> header_integer(const Json& header, const char* key, std::int64_t max,
                                           const std::string& path, Problems& problems) {
  const auto it = header.find(key);
  if (it != header.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0 && it->get<std::int64_t>() <= max) {
    return it->get<std::int64_t>();
  }
  problems.add(path, fmt::format("bad header: '{}' is {}", key, it == header.end() ? "missing" : it->dump()),
               fmt::format("an integer from 0 to {}", max));
  return std::nullopt;
}

struct Header {
  Json meta;
  std::int64_t step = 0, adam_step = 0, params = 0, adam_m = 0, adam_v = 0;
};

// The header line's fields, every problem at once.
Header read_header(const Json& json, const std::string& path) {
  Problems problems;
  constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
  const auto step = header_integer(json, "step", kMaxInt, path, problems);
  const auto adam_step = header_integer(json, "adam_step", kMaxInt, path, problems);
  const auto params = header_integer(json, "params", kMaxFloats, path, problems);
  const auto adam_m = header_integer(json, "adam_m", kMaxFloats, path, problems);
  const auto adam_v = header_integer(json, "adam_v", kMaxFloats, path, problems);
  if (!json.contains("meta")) problems.add(path, "bad header: 'meta' is missing");
  if (params && adam_m && adam_v) check_moment_lengths(path, "bad header: ", *params, *adam_m, *adam_v, problems);
  problems.throw_if_any();
  return {json.at("meta"), *step, *adam_step, *params, *adam_m, *adam_v};
}

// The magic line: this version's, or an error saying whose it is.
void check_magic(std::string_view text, const std::string& path) {
  if (text.starts_with(std::string(kTrainingStateMagic) + "\n")) return;
  if (text.starts_with(kVersion1Magic)) {
    throw Error(Problem{path,
                        fmt::format("written by an older burst: format burst.training_state/1, whose checksum "
                                    "leaves the header unchecked; this burst reads {}",
                                    kTrainingStateMagic),
                        "", "resume it with the burst that saved it, or start a new run and --save again"});
  }
  const std::string problem =
      text.empty() ? "the file is empty" : fmt::format("it does not start with '{}'", kTrainingStateMagic);
  throw Error(Problem{path, "not a training state: " + problem, "", "give a file written by save_training_state"});
}

// A training-state file split into what the checksum covers and the checksum itself.
struct StateFile {
  std::string_view magic_and_header;  // the first two lines, newlines included
  Header header;
  std::uint32_t crc = 0;  // the checksum line's value
  std::string_view body;
};

// The value of the checksum line at the start of `rest`, dropped from it.
std::uint32_t take_checksum_line(std::string_view& rest, const std::string& path) {
  const std::string_view line = rest.substr(0, kChecksumLineSize);
  const bool framed = line.size() == kChecksumLineSize && line.starts_with(kChecksumPrefix) && line.ends_with('\n');
  const std::string_view digits = framed ? line.substr(kChecksumPrefix.size(), 8) : std::string_view();
  std::uint32_t crc = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), crc, 16);
  if (!framed || error != std::errc() || end != digits.data() + digits.size()) {
    throw Error(Problem{path, "bad checksum line: the third line is not 'crc32' and 8 hex digits", "",
                        "the file was cut short or edited; resume from another copy"});
  }
  rest.remove_prefix(kChecksumLineSize);
  return crc;
}

// The header line as JSON; null when it is not JSON, repeats a key or nests deeper than
// kMaxJsonDepth (a deeper `meta` overflowed the stack when copied into the Header).
Json parse_header_line(std::string_view line, const std::string& path) {
  try {
    return parse_json_text(line, path);
  } catch (const Error&) {
    return nullptr;
  }
}

// The file's lines and body; the header's fields checked, the checksum not yet.
StateFile split_state_file(std::string_view text, const std::string& path) {
  check_magic(text, path);
  const std::size_t magic_size = std::string_view(kTrainingStateMagic).size() + 1;
  const auto end_of_line = text.find('\n', magic_size);
  if (end_of_line == std::string_view::npos) {
    throw Error(Problem{path, "bad header: the file ends inside the header line", "",
                        "the file was cut short; resume from another copy"});
  }
  const Json json = parse_header_line(text.substr(magic_size, end_of_line - magic_size), path);
  if (!json.is_object()) throw Error(Problem{path, "bad header: the second line is not a JSON object", "", ""});
  StateFile file{text.substr(0, end_of_line + 1), read_header(json, path), 0, text.substr(end_of_line + 1)};
  file.crc = take_checksum_line(file.body, path);
  return file;
}

void check_body(const StateFile& file, const std::string& path) {
  const Header& header = file.header;
  const auto expected = static_cast<std::size_t>(4 * (header.params + header.adam_m + header.adam_v));
  if (file.body.size() < expected) {
    throw Error(Problem{path, fmt::format("truncated: {} bytes of {}", file.body.size(), expected), "",
                        "the file was cut short; resume from another copy"});
  }
  if (file.body.size() > expected) {
    throw Error(
        Problem{path, fmt::format("too long: {} body bytes, the header says {}", file.body.size(), expected), "", ""});
  }
  if (const std::uint32_t crc = state_crc32(file.magic_and_header, file.body); crc != file.crc) {
    throw Error(Problem{
        path,
        fmt::format("corrupt: checksum {:08x} of the header and body, the checksum line says {:08x}", crc, file.crc),
        "", "the file was damaged or edited; resume from another copy"});
  }
}

}  // namespace

void save_training_state(const std::string& path, const TrainingState& state) {
  Problems problems;
  check_moment_lengths(path, "cannot save the training state: ", std::ssize(state.params), std::ssize(state.adam_m),
                       std::ssize(state.adam_v), problems);
  problems.throw_if_any();
  std::string body;
  body.reserve(4 * (state.params.size() + state.adam_m.size() + state.adam_v.size()));
  append_floats(body, state.params);
  append_floats(body, state.adam_m);
  append_floats(body, state.adam_v);
  const Json header = {{"meta", state.meta},
                       {"step", state.step},
                       {"adam_step", state.adam_step},
                       {"params", state.params.size()},
                       {"adam_m", state.adam_m.size()},
                       {"adam_v", state.adam_v.size()}};
  std::string text = fmt::format("{}\n{}\n", kTrainingStateMagic, header.dump());
  text += fmt::format("{}{:08x}\n", kChecksumPrefix, state_crc32(text, body));
  text += body;
  write_file_atomically(path, text, "the training state");
}

TrainingState load_training_state(const std::string& path) {
  return parse_training_state(read_untrusted_file(path, kTrainingStateFileCap), path);
}

TrainingState parse_training_state(std::string_view text, const std::string& path) {
  const StateFile file = split_state_file(text, path);
  check_body(file, path);
  const Header& header = file.header;
  std::string_view rest = file.body;
  TrainingState state{header.meta, header.step, {}, {}, {}, header.adam_step};
  state.params = take_floats(rest, header.params);
  state.adam_m = take_floats(rest, header.adam_m);
  state.adam_v = take_floats(rest, header.adam_v);
  return state;
}

void check_trainable_values(const TrainingState& state, const std::string& path) {
  Problems problems;
  const auto check = [&](const char* name, const std::vector<float>& values, bool non_negative) {
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isfinite(values[i]) && (!non_negative || values[i] >= 0.0f)) continue;
      if (bad++ == 0) first = i;
    }
    if (bad == 0) return;
    problems.add(path,
                 fmt::format("{}[{}] is {}{}", name, first, values[first],
                             bad > 1 ? fmt::format(" ({} bad values in {} of {})", bad, name, values.size()) : ""),
                 non_negative ? "finite values, at least 0" : "finite values",
                 "a state saved from a diverged run cannot train; resume from an earlier save (its generation's "
                 "manifest) or start afresh");
  };
  check("params", state.params, false);
  check("adam_m", state.adam_m, false);
  check("adam_v", state.adam_v, true);
  problems.throw_if_any();
}

}  // namespace burst::rt
