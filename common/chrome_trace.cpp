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
  const bool plain = std::none_of(text.begin(), text.end(),
                                  [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; });
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

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }

void ChromeTraceWriter::begin_event() {
  buffer_.clear();
  if (!first_) fmt::format_to(std::back_inserter(buffer_), ",\n");
  first_ = false;
}

void ChromeTraceWriter::end_event() {
  buffer_.push_back('}');
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
}

void ChromeTraceWriter::metadata(std::string_view kind, int pid, int tid, const Arg& arg) {
  begin_event();
  fmt::format_to(std::back_inserter(buffer_), R"({{"ph":"M","name":"{}","pid":{},"tid":{})", kind, pid, tid);
  args({arg});
  end_event();
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
  fmt::format_to(std::back_inserter(buffer_), R"({{"ph":"{}","name":)", phase);
  quoted(buffer_, slice.name);
  fmt::format_to(std::back_inserter(buffer_), ",\"cat\":");
  quoted(buffer_, slice.category);
  fmt::format_to(std::back_inserter(buffer_), R"(,"pid":{},"tid":{})", slice.pid, slice.tid);
  timestamp(buffer_, "ts", slice.start_s);
}

void ChromeTraceWriter::complete(const Slice& slice, std::initializer_list<Arg> list) {
  event_head('X', slice);
  timestamp(buffer_, "dur", slice.duration_s);
  args(list);
  end_event();
}

void ChromeTraceWriter::instant(const Slice& slice, std::initializer_list<Arg> list) {
  event_head('i', slice);
  fmt::format_to(std::back_inserter(buffer_), R"(,"s":"t")");
  args(list);
  end_event();
}

void ChromeTraceWriter::counter(std::string_view name, int pid, double time_s, std::string_view series, double value) {
  begin_event();
  fmt::format_to(std::back_inserter(buffer_), R"({{"ph":"C","name":)");
  quoted(buffer_, name);
  fmt::format_to(std::back_inserter(buffer_), R"(,"pid":{})", pid);
  timestamp(buffer_, "ts", time_s);
  args({{series, value}});
  end_event();
}

void ChromeTraceWriter::args(std::initializer_list<Arg> list) {
  fmt::format_to(std::back_inserter(buffer_), ",\"args\":{{");
  bool first = true;
  for (const Arg& a : list) {
    if (!first) buffer_.push_back(',');
    first = false;
    quoted(buffer_, a.key);
    buffer_.push_back(':');
    if (const double* x = std::get_if<double>(&a.value)) {
      number(buffer_, *x);
    } else {
      quoted(buffer_, std::get<std::string_view>(a.value));
    }
  }
  buffer_.push_back('}');
}

void ChromeTraceWriter::finish() { out_ << "\n],\"displayTimeUnit\":\"ns\"}\n"; }

}  // namespace burst::trace
