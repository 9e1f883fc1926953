// For the training-state fuzzers: a state file's text with its checksum line made right, so
// that mutated headers and bodies get past the CRC-32 (which anyone can recompute) to the
// checks behind it.
#pragma once

#include <string>
#include <string_view>

#include <boost/crc.hpp>
#include <fmt/format.h>

namespace burst::fuzz {

// `text` with its third line replaced by "crc32 XXXXXXXX" of the other bytes; unchanged when it
// has fewer than three lines.
inline std::string with_right_checksum(std::string_view text) {
  const auto first = text.find('\n');
  const auto second = first == std::string_view::npos ? first : text.find('\n', first + 1);
  const auto third = second == std::string_view::npos ? second : text.find('\n', second + 1);
  if (third == std::string_view::npos) return std::string(text);
  const std::string_view head = text.substr(0, second + 1), body = text.substr(third + 1);
  boost::crc_32_type crc;
  crc.process_bytes(head.data(), head.size());
  crc.process_bytes(body.data(), body.size());
  return fmt::format("{}crc32 {:08x}\n{}", head, crc.checksum(), body);
}

}  // namespace burst::fuzz
