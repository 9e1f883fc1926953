// The Chrome trace event format (the JSON "traceEvents" file that Perfetto and chrome://tracing
// open), written as a stream: the one writer behind the simulator's predicted timelines and the
// runtime's measured ones, so both open side by side with the same look.
//
// The format in brief: a file {"traceEvents":[...],"displayTimeUnit":"ns"} of events, each with
// a phase "ph". A viewer groups events by process (pid) and, inside it, by thread (tid); both
// are plain integers that metadata events ("M": process_name, thread_name and their
// *_sort_index) name and order. A complete event ("X") is a slice [ts, ts + dur] on one thread,
// an instant ("i", scope "t") a tick on one, a counter ("C") one sample of a per-process graph.
// Times are microseconds; callers pass seconds and the writer prints microseconds with
// nanosecond decimals. Slices of one thread must nest (or not overlap) to display properly:
// that is the callers' business (their lane layout).
//
// Events go straight to the stream (a simulated layer can have millions); names and text args
// are JSON-escaped, numbers that are not finite become null.
#pragma once

#include <concepts>
#include <initializer_list>
#include <ostream>
#include <string_view>
#include <variant>

#include <fmt/format.h>

namespace burst::trace {

// One entry of an event's "args" (the viewer's details pane): a number or a text.
struct Arg {
  Arg(std::string_view k, double v) : key(k), value(v) {}
  template <std::integral T>
  Arg(std::string_view k, T v) : key(k), value(static_cast<double>(v)) {}
  Arg(std::string_view k, std::string_view v) : key(k), value(v) {}
  Arg(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}

  std::string_view key;
  std::variant<double, std::string_view> value;
};

// Where and when an event happens.
struct Slice {
  std::string_view name;
  std::string_view category;  // e.g. "forward": viewers filter and colour by it
  int pid = 0, tid = 0;
  double start_s = 0;
  double duration_s = 0;  // complete events only
};

class ChromeTraceWriter {
 public:
  // Writes the file's opening; finish() writes its end.
  explicit ChromeTraceWriter(std::ostream& out);

  // Names a process or thread and sets its place in the viewer's order.
  void process(int pid, std::string_view name, int sort_index);
  void thread(int pid, int tid, std::string_view name, int sort_index);

  void complete(const Slice& slice, std::initializer_list<Arg> args = {});  // "X"
  void instant(const Slice& slice, std::initializer_list<Arg> args = {});   // "i", on its thread
  // One sample of the counter track `name` of process `pid`: series = value from time_s on.
  void counter(std::string_view name, int pid, double time_s, std::string_view series, double value);

  void finish();

 private:
  void begin_event();
  void end_event();
  void event_head(char phase, const Slice& slice);
  void metadata(std::string_view kind, int pid, int tid, const Arg& arg);
  void args(std::initializer_list<Arg> args);

  std::ostream& out_;
  fmt::memory_buffer buffer_;  // the event being formatted
  bool first_ = true;
};

}  // namespace burst::trace
