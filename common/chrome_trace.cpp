// Writing the Chrome trace format (see chrome_trace.hpp). Each event is formatted into a small
// buffer and appended to the stream; strings without characters JSON must escape (the usual
// case) are copied as they are, the others go through nlohmann's serializer.
#include "common/chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace burst::trace {
namespace {

void quoted(fmt::memory_buffer& out, std::string_view text) {
  const bool plain = std::none_of(text.begin(), text.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  if (plain) {
    fmt::format_to(std::back_inserter(out), "\"{}\"", text);
  } else {
    const std::string escaped = nlohmann::json(std::string(text)).dump();
    out.append(escaped.data(), escaped.data() + escaped.size());
  }
}

void number(fmt::memory_buffer& out, double value) {
  if (std::isfinite(value)) {
    fmt::format_to(std::back_inserter(out), "{}", value);
  } else {
    fmt::format_to(std::back_inserter(out), "null");
  }
}

// Seconds -> the format's microseconds, to the nanosecond.
void timestamp(fmt::memory_buffer& out, std::string_view key, double seconds) {
  fmt::format_to(std::back_inserter(out), ",\"{}\":{:.3f}", key, seconds * 1e6);
}

}  // namespace

// One buffer per writer would be faster still; a function-local one keeps the header plain.
thread_local fmt::memory_buffer buffer;

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }

void ChromeTraceWriter::begin_event() {
  buffer.clear();
  if (!first_) fmt::format_to(std::back_inserter(buffer), ",\n");
  first_ = false;
}

void ChromeTraceWriter::metadata(std::string_view kind, int pid, int tid, const Arg& arg) {
  begin_event();
  fmt::format_to(std::back_inserter(buffer), R"({{"ph":"M","name":"{}","pid":{},"tid":{})", kind, pid, tid);
  args({arg});
  buffer.push_back('}');
  out_.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void ChromeTraceWriter::process(int pid, std::string_view name, int sort_index) {
  metadata("process_name", pid, 0, {"name", name});
  metadata("process_sort_index", pid, 0, {"sort_index", sort_index});
}

void ChromeTraceWriter::thread(int pid, int tid, std::string_view name, int sort_index) {
  metadata("thread_name", pid, tid, {"name", name});
  metadata("thread_sort_index", pid, tid, {"sort_index", sort_index});
}

void ChromeTraceWriter::event_head(char phase, const Slice& slice) {
  begin_event();
  fmt::format_to(std::back_inserter(buffer), R"({{"ph":"{}","name":)", phase);
  quoted(buffer, slice.name);
  fmt::format_to(std::back_inserter(buffer), ",\"cat\":");
  quoted(buffer, slice.category);
  fmt::format_to(std::back_inserter(buffer), R"(,"pid":{},"tid":{})", slice.pid, slice.tid);
  timestamp(buffer, "ts", slice.start_s);
}

void ChromeTraceWriter::complete(const Slice& slice, std::initializer_list<Arg> list) {
  event_head('X', slice);
  timestamp(buffer, "dur", slice.duration_s);
  args(list);
  buffer.push_back('}');
  out_.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void ChromeTraceWriter::instant(const Slice& slice, std::initializer_list<Arg> list) {
  event_head('i', slice);
  fmt::format_to(std::back_inserter(buffer), R"(,"s":"t")");
  args(list);
  buffer.push_back('}');
  out_.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void ChromeTraceWriter::counter(std::string_view name, int pid, double time_s, std::string_view series, double value) {
  begin_event();
  fmt::format_to(std::back_inserter(buffer), R"({{"ph":"C","name":)");
  quoted(buffer, name);
  fmt::format_to(std::back_inserter(buffer), R"(,"pid":{})", pid);
  timestamp(buffer, "ts", time_s);
  args({{series, value}});
  buffer.push_back('}');
  out_.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void ChromeTraceWriter::args(std::initializer_list<Arg> list) {
  fmt::format_to(std::back_inserter(buffer), ",\"args\":{{");
  bool first = true;
  for (const Arg& a : list) {
    if (!first) buffer.push_back(',');
    first = false;
    quoted(buffer, a.key);
    buffer.push_back(':');
    if (const double* x = std::get_if<double>(&a.value)) {
      number(buffer, *x);
    } else {
      quoted(buffer, std::get<std::string_view>(a.value));
    }
  }
  buffer.push_back('}');
}

void ChromeTraceWriter::finish() { out_ << "\n],\"displayTimeUnit\":\"ns\"}\n"; }

}  // namespace burst::trace
