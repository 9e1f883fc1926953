// One escaping function per output (see escape.hpp).
#include "common/escape.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace burst::escape {
namespace {

// One character of UTF-8 text: its bytes and code point (-1: a byte that is not UTF-8).
struct Char {
  std::string_view bytes;
  int code = -1;
  [[nodiscard]] bool printable() const {
    return code >= 0x20 && code != 0x7f && !(code >= 0x80 && code <= 0x9f) && code != 0x2028 && code != 0x2029 &&
           code != 0xfffe && code != 0xffff;
  }
};

// The character at `at`: a well-formed UTF-8 sequence (no overlong form, no surrogate, at most
// U+10FFFF), or the one byte there when none starts at it.
Char decode(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return {text.substr(at, 1), lead};
  std::size_t size = 0;
  int code = 0, least = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    size = 2, code = lead & 0x1f, least = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    size = 3, code = lead & 0x0f, least = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    size = 4, code = lead & 0x07, least = 0x10000;
  } else {
    return {text.substr(at, 1), -1};
  }
  if (at + size > text.size()) return {text.substr(at, 1), -1};
  for (std::size_t i = 1; i < size; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return {text.substr(at, 1), -1};
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return {text.substr(at, 1), -1};
  return {text.substr(at, size), code};
}

// Calls f(Char) for each character of `text`.
template <class F>
void each_char(std::string_view text, F&& f) {
  for (std::size_t at = 0; at < text.size();) {
    const Char c = decode(text, at);
    f(c);
    at += c.bytes.size();
  }
}

// An unprintable character as people read it: \n, \r, \t, or \xNN for each of its bytes.
void append_visible(std::string& out, const Char& c) {
  if (c.code == '\n') {
    out += "\\n";
  } else if (c.code == '\r') {
    out += "\\r";
  } else if (c.code == '\t') {
    out += "\\t";
  } else {
    for (const char b : c.bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(b));
  }
}

std::string visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  each_char(text, [&](const Char& c) {
    if (c.printable()) {
      out += c.bytes;
    } else {
      append_visible(out, c);
    }
  });
  return out;
}

// An unprintable character inside a quoted YAML or TOML string: \n, \r, \t or \uXXXX (every
// unprintable code point is below U+10000); a byte that is not UTF-8 as U+FFFD.
void append_unicode_escape(std::string& out, const Char& c) {
  if (c.code == '\n') {
    out += "\\n";
  } else if (c.code == '\r') {
    out += "\\r";
  } else if (c.code == '\t') {
    out += "\\t";
  } else {
    out += fmt::format("\\u{:04X}", c.code < 0 ? 0xfffd : c.code);
  }
}

bool plain_shell_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
}

// A word YAML reads as this same string when written plain: a letter, then letters, digits
// and - _ . /, and none of the YAML 1.1 booleans or null (any case).
bool plain_yaml(std::string_view text) {
  if (text.empty()) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(text.front())) return false;
  const auto word = [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || std::string_view("-_./").find(c) != std::string_view::npos;
  };
  if (!std::all_of(text.begin(), text.end(), word)) return false;
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const std::string_view special : {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}) {
    if (lower == special) return false;
  }
  return true;
}

// `open`, then `text` with `quote` and backslash each after a backslash and every unprintable
// character as `unprintable` writes it, then `quote`: the double-quoted strings of YAML and TOML,
// and bash's $'...'.
template <class Unprintable>
std::string backslash_quoted(std::string_view text, std::string_view open, char quote, Unprintable unprintable) {
  std::string out(open);
  each_char(text, [&](const Char& c) {
    if (!c.printable()) {
      unprintable(out, c);
    } else if (c.code == '\\' || c.code == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += c.bytes;
    } else {
      out += c.bytes;
    }
  });
  return out + quote;
}

}  // namespace

std::optional<std::size_t> unprintable_at(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const Char c = decode(text, at);
    if (!c.printable()) return at;
    at += c.bytes.size();
  }
  return std::nullopt;
}

std::string describe_unprintable(std::string_view text) {
  const auto at = unprintable_at(text);
  if (!at) return {};
  const Char c = decode(text, *at);
  std::string shown;
  append_visible(shown, c);
  const char* what = c.code < 0                             ? "is not UTF-8"
                     : c.code == 0x2028                     ? "starts a line separator"
                     : c.code == 0x2029                     ? "starts a paragraph separator"
                     : c.code == 0xfffe || c.code == 0xffff ? "starts a noncharacter"
                     : c.bytes.size() > 1                   ? "starts a control character"
                                                            : "is a control character";
  return fmt::format("byte {} {} ({})", *at + 1, what, shown);
}

std::string terminal(std::string_view text) { return visible(text); }

std::string comment(std::string_view text) { return visible(text); }

std::string shell_word(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain_shell_char)) return std::string(word);
  if (!unprintable_at(word)) {
    std::string out = "'";
    for (const char c : word) out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
    return out + "'";
  }
  return backslash_quoted(word, "$'", '\'', append_visible);
}

std::string yaml_scalar(std::string_view text) {
  if (plain_yaml(text)) return std::string(text);
  return backslash_quoted(text, "\"", '"', append_unicode_escape);
}

std::string toml_string(std::string_view text) { return backslash_quoted(text, "\"", '"', append_unicode_escape); }

std::string html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  each_char(text, [&](const Char& c) {
    if (!c.printable()) {
      append_visible(out, c);
      return;
    }
    switch (c.code) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c.bytes;
    }
  });
  return out;
}

std::string markdown(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  each_char(text, [&](const Char& c) {
    if (c.code == '\n') {
      out += ' ';
      return;
    }
    if (!c.printable()) {
      std::string shown;
      append_visible(shown, c);
      for (const char b : shown) out += b == '\\' ? std::string_view("\\\\") : std::string_view(&b, 1);
      return;
    }
    switch (c.code) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '|':
        out += '\\';
        out += c.bytes;
        break;
      default: out += c.bytes;
    }
  });
  return out;
}

}  // namespace burst::escape
