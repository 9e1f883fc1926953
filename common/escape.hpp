// Text from outside (a model name, a topology name, a path, a reason) as each kind of output
// burst writes must carry it: one function per target, so a name can neither end a comment
// line, add a key to a settings file, run as shell, break a report's markup nor move a
// terminal's cursor.
//
// What no output carries raw ("unprintable" below): control characters (C0, DEL and the C1
// controls U+0080..U+009F, which some terminals obey as escape sequences), the line and
// paragraph separators U+2028 and U+2029 (YAML 1.1 reads them as line breaks, so they would
// end a comment), the noncharacters U+FFFE and U+FFFF (which YAML refuses), and bytes that are
// not UTF-8. Shown to people, they read as \n, \r, \t or \xNN, one \xNN per byte (ESC is
// "\x1b", U+2028 "\xe2\x80\xa8"); a backslash already in the text is left as it is, so the
// visible form is for reading, not for decoding. In settings values they are the format's own
// escapes and read back as the same characters.
//
// Names read from our files (plans, topologies, models, calibrations) must be printable:
// JsonReader::name and the readers refuse any other, saying which byte (unprintable_at).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace burst::escape {

// The offset of the first unprintable byte (the first byte of an unprintable character), or
// nullopt when every character is printable.
[[nodiscard]] std::optional<std::size_t> unprintable_at(std::string_view text);
// For an error about text that is not printable: "byte 2 is a control character (\x1b)",
// "byte 5 is not UTF-8 (\xff)", "byte 3 starts a line separator (\xe2\x80\xa8)" (bytes counted
// from 1); "" when the text is printable.
[[nodiscard]] std::string describe_unprintable(std::string_view text);

// A terminal line: unprintable characters as \n, \r, \t or \xNN, the rest as it is.
[[nodiscard]] std::string terminal(std::string_view text);
// The text after "# " on one comment line of a shell script, YAML or TOML: as terminal(), so
// the comment ends where the line does.
[[nodiscard]] std::string comment(std::string_view text);
// A word of a shell command line: as it is when it needs no quoting (letters, digits and
// -_./=:,+@%), in single quotes when it is printable, and as $'...' with \xNN escapes when it
// is not (bash, ksh, zsh and POSIX.1-2024 shells read it back as the same bytes; dash 0.5 does
// not know $'...'). Never spans lines.
[[nodiscard]] std::string shell_word(std::string_view word);
// A YAML scalar that reads back as this string (YAML 1.1 and 1.2): plain when it is a word
// that no YAML reader takes for a number, a boolean or null ("fast-swiglu", "p2p"), otherwise
// double-quoted with \\, \" and \uXXXX escapes (a byte that is not UTF-8 becomes U+FFFD).
[[nodiscard]] std::string yaml_scalar(std::string_view text);
// A TOML basic string, quotes included: \\, \" and unprintable characters as \n, \r, \t or
// \uXXXX (a byte that is not UTF-8 becomes U+FFFD).
[[nodiscard]] std::string toml_string(std::string_view text);
// HTML and XML text or attribute value (double- or single-quoted): & < > " ' as entities and
// unprintable characters as terminal() shows them (XML 1.0 has no reference for most control
// characters, so none can be carried as one).
[[nodiscard]] std::string html(std::string_view text);
// A Markdown paragraph or table cell: & < > as entities, \ ` * [ ] | backslash-escaped, a line
// break as a space and other unprintable characters as terminal() shows them.
[[nodiscard]] std::string markdown(std::string_view text);

}  // namespace burst::escape
