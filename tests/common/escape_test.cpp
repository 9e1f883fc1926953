// The escaping functions of common/escape.hpp, one per output: what each writes for names a
// reader would otherwise take for syntax (a line break, a YAML key, a TOML table, a quote, a
// terminal's escape sequence), and that bash, Python's yaml and tomllib read back exactly the
// text that went in, with nothing added.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/escape.hpp"
#include "tests/support/read_back.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
using test::raw_control_at;

// A namespace of its own: the unity build compiles this file with the others of its test.
namespace burst::test::escape_test {
namespace {

using namespace std::string_literals;

// Names that try to be syntax, and every kind of character escape.hpp calls unprintable.
const std::vector<std::string>& nasty() {
  static const std::vector<std::string> words = {"plain",
                                                 "",
                                                 "yes",
                                                 "16",
                                                 "a: b",
                                                 "x\ntouch PWNED\n",
                                                 "t\n[evil]\nkey = 1",
                                                 "#not a comment",
                                                 "quote\" and back\\slash",
                                                 "tab\there",
                                                 "cr\rhere",
                                                 "nul\0here"s,
                                                 "esc\x1b[31mred\x1b[0m",
                                                 "del\x7f",
                                                 "c1 \xc2\x9b[31m csi",
                                                 "nel \xc2\x85key: 1",
                                                 "ls \xe2\x80\xa8key: 1 ps \xe2\x80\xa9",
                                                 "na\xc3\xafve \xe6\x97\xa5 \xf0\x9f\x98\x80",
                                                 "'single'",
                                                 "$HOME `id` $(id)",
                                                 "-dash",
                                                 "~",
                                                 "null",
                                                 "*alias",
                                                 "&anchor",
                                                 "!tag",
                                                 "{a: 1}",
                                                 "[1]",
                                                 "%directive",
                                                 "noncharacter \xef\xbf\xbf"};
  return words;
}

}  // namespace

TEST_CASE("unprintable text is found and described by its byte") {
  CHECK_FALSE(escape::unprintable_at("llama3-8b"));
  CHECK_FALSE(escape::unprintable_at("na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));  // UTF-8 is printable
  CHECK(escape::unprintable_at("x\x1b[31m") == 1u);
  CHECK(escape::unprintable_at("a\tb") == 1u);
  CHECK(escape::unprintable_at("\xc0\xaf") == 0u);        // an overlong '/'
  CHECK(escape::unprintable_at("ok\xed\xa0\x80") == 2u);  // a surrogate
  CHECK(escape::unprintable_at("ok\xe6\x97") == 2u);      // cut short
  CHECK(escape::describe_unprintable("x\x1b[31m") == "byte 2 is a control character (\\x1b)");
  CHECK(escape::describe_unprintable("ab\n") == "byte 3 is a control character (\\n)");
  CHECK(escape::describe_unprintable("nul\0"s) == "byte 4 is a control character (\\x00)");
  CHECK(escape::describe_unprintable("a\xff") == "byte 2 is not UTF-8 (\\xff)");
  CHECK(escape::describe_unprintable("c1\xc2\x9b") == "byte 3 starts a control character (\\xc2\\x9b)");
  CHECK(escape::describe_unprintable("a\xe2\x80\xa8") == "byte 2 starts a line separator (\\xe2\\x80\\xa8)");
  CHECK(escape::describe_unprintable("fine").empty());
}

TEST_CASE("the terminal and comment lines show control characters instead of obeying them") {
  CHECK(escape::terminal("burst-14b") == "burst-14b");
  CHECK(escape::terminal("x\ntouch PWNED\n") == "x\\ntouch PWNED\\n");
  CHECK(escape::terminal("\x1b[2J\x1b[31mred\r\t") == "\\x1b[2J\\x1b[31mred\\r\\t");
  CHECK(escape::terminal("a\0b"s) == "a\\x00b");
  CHECK(escape::terminal("csi \xc2\x9b"
                         "31m") == "csi \\xc2\\x9b31m");  // two literals: \x9b31 would be one escape
  CHECK(escape::terminal("bad \xff byte") == "bad \\xff byte");
  CHECK(escape::terminal("\xe6\x97\xa5\xe6\x9c\xac") == "\xe6\x97\xa5\xe6\x9c\xac");
  for (const std::string& w : nasty()) {
    INFO(escape::terminal(w));
    CHECK(raw_control_at(escape::terminal(w)) == std::string::npos);
    CHECK(escape::comment(w).find('\n') == std::string::npos);
    CHECK_FALSE(escape::unprintable_at(escape::comment(w)));
  }
}

TEST_CASE("shell words: plain, single-quoted, or $'...' for control characters; bash reads back the same bytes") {
  CHECK(escape::shell_word("/data/plan.json") == "/data/plan.json");
  CHECK(escape::shell_word("") == "''");
  CHECK(escape::shell_word("my plan.json") == "'my plan.json'");
  CHECK(escape::shell_word("it's") == "'it'\\''s'");
  CHECK(escape::shell_word("x\ntouch PWNED\n") == "$'x\\ntouch PWNED\\n'");
  CHECK(escape::shell_word("a'b\\c\x1b") == "$'a\\'b\\\\c\\x1b'");
  test::TempDir dir("escape-shell");
  std::vector<std::string> words = nasty();
  words.emplace_back("not UTF-8 \xff\xfe");
  for (const std::string& w : words) {
    if (w.find('\0') != std::string::npos) continue;  // no argument holds a NUL
    const std::string word = escape::shell_word(w);
    INFO(word);
    CHECK(word.find('\n') == std::string::npos);
    CHECK(raw_control_at(word) == std::string::npos);
    const std::string script = (dir.path / "word.sh").string();
    std::ofstream(script, std::ios::binary) << "printf '%s' " << word << "\n";
    const test::ShellRun run = test::shell_run("cd " + test::sh_quoted(dir.path.string()) + " && bash " + script);
    CHECK(run.status == 0);
    CHECK(run.out == w);
    CHECK(dir.entries() == std::vector<std::string>{"word.sh"});  // nothing ran: no file appeared
  }
}

TEST_CASE("YAML scalars and comments: Python's yaml reads back each value, and only the keys written") {
  CHECK(escape::yaml_scalar("fast-swiglu") == "fast-swiglu");
  CHECK(escape::yaml_scalar("distributed_fused_adam") == "distributed_fused_adam");
  CHECK(escape::yaml_scalar("yes") == "\"yes\"");
  CHECK(escape::yaml_scalar("16") == "\"16\"");
  CHECK(escape::yaml_scalar("") == "\"\"");
  CHECK(escape::yaml_scalar("x\nkey: 1") == "\"x\\nkey: 1\"");
  CHECK(escape::yaml_scalar("esc\x1b") == "\"esc\\u001B\"");
  CHECK(escape::yaml_scalar("bad\xff") == "\"bad\\uFFFD\"");
  std::string doc;
  Json expected = Json::object();
  for (std::size_t i = 0; i < nasty().size(); ++i) {
    const std::string& w = nasty()[i];
    doc += "# " + escape::comment(w) + "\n";
    doc += "k" + std::to_string(i) + ": " + escape::yaml_scalar(w) + "\n";
    expected["k" + std::to_string(i)] = w;
  }
  CHECK(raw_control_at(doc) == std::string::npos);
  test::TempDir dir("escape-yaml");
  const test::ShellRun loaded = test::python_loaded(dir.path, doc, "yaml.safe_load(f)");
  INFO(doc << "\n" << loaded.out);
  REQUIRE(loaded.status == 0);
  CHECK(Json::parse(loaded.out) == expected);
}

TEST_CASE("TOML strings and comments: tomllib reads back each value, and only the keys written") {
  CHECK(escape::toml_string("alltoall") == "\"alltoall\"");
  CHECK(escape::toml_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(escape::toml_string("x\n[evil]") == "\"x\\n[evil]\"");
  CHECK(escape::toml_string("nul\0"s) == "\"nul\\u0000\"");
  CHECK(escape::toml_string("bad\xff") == "\"bad\\uFFFD\"");
  std::string doc;
  Json expected = Json::object();
  for (std::size_t i = 0; i < nasty().size(); ++i) {
    const std::string& w = nasty()[i];
    doc += "# " + escape::comment(w) + "\n";
    doc += "k" + std::to_string(i) + " = " + escape::toml_string(w) + "\n";
    expected["k" + std::to_string(i)] = w;
  }
  CHECK(raw_control_at(doc) == std::string::npos);
  test::TempDir dir("escape-toml");
  const test::ShellRun loaded = test::python_loaded(dir.path, doc, "tomllib.load(f)");
  INFO(doc << "\n" << loaded.out);
  REQUIRE(loaded.status == 0);
  CHECK(Json::parse(loaded.out) == expected);
}

TEST_CASE("HTML text and attributes: markup as entities, control characters shown") {
  CHECK(escape::html("<script>alert('x')</script> & \"co\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;co&quot;");
  CHECK(escape::html("nul\0esc\x1b[31m"s) == "nul\\x00esc\\x1b[31m");
  CHECK(escape::html("\xe6\x97\xa5\xe6\x9c\xac") == "\xe6\x97\xa5\xe6\x9c\xac");
  for (const std::string& w : nasty()) {
    const std::string h = escape::html(w);
    INFO(h);
    CHECK(raw_control_at(h) == std::string::npos);
    CHECK_FALSE(escape::unprintable_at(h));
    CHECK(h.find_first_of("<>\"'") == std::string::npos);
  }
}

TEST_CASE("Markdown: markup escaped, a line break as a space, control characters shown") {
  CHECK(escape::markdown("a|b <b> *x* [l](u) `c` \\") == "a\\|b &lt;b&gt; \\*x\\* \\[l\\](u) \\`c\\` \\\\");
  CHECK(escape::markdown("two\nlines") == "two lines");
  CHECK(escape::markdown("esc\x1b[31m") == "esc\\\\x1b\\[31m");
  for (const std::string& w : nasty()) CHECK(raw_control_at(escape::markdown(w)) == std::string::npos);
}

TEST_CASE("whatever the bytes, every escaped form is printable text on one line") {
  // Bytes drawn mostly from the troublesome ones: C0, DEL, UTF-8 lead and continuation bytes
  // (C1 controls, U+2028, U+FFFF and broken sequences among their combinations), quotes.
  const std::string alphabet =
      std::string("\0\t\n\r\x1b\x7f\xc2\x85\x9b\xe2\x80\xa8\xef\xbf\xbe\xf0\xff'\"\\$`#:[ a", 27);
  std::uint32_t state = 12345;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string text(next() % 12, ' ');
    for (char& c : text) c = alphabet[next() % alphabet.size()];
    INFO(escape::terminal(text));
    for (const std::string& out :
         {escape::terminal(text), escape::comment(text), escape::shell_word(text), escape::yaml_scalar(text),
          escape::toml_string(text), escape::html(text), escape::markdown(text)}) {
      REQUIRE_FALSE(escape::unprintable_at(out));
    }
    REQUIRE(escape::unprintable_at(text).has_value() == !escape::describe_unprintable(text).empty());
  }
}

}  // namespace burst::test::escape_test
