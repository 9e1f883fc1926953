// read_untrusted_file: a regular file within its cap reads back whole; anything else is refused
// at once, by what it is (a device, a FIFO, a directory, a symlink loop) or by its size with the
// cap in the message, and nothing blocks.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/untrusted_file.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
namespace fs = std::filesystem;

namespace {

constexpr FileCap kTenBytes{"a test file", 10};

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string error_of(const std::string& path, const FileCap& cap = kTenBytes) {
  return test::error_text([&] { (void)read_untrusted_file(path, cap); });
}

}  // namespace

TEST_CASE("a regular file within its cap reads back whole, up to the cap exactly") {
  const test::TempDir dir("untrusted-ok");
  CHECK(read_untrusted_file(write(dir.path / "empty", ""), kTenBytes).empty());
  CHECK(read_untrusted_file(write(dir.path / "ten", std::string("0123456\0"
                                                                "89",
                                                                10)),
                            kTenBytes) == std::string("0123456\0"
                                                      "89",
                                                      10));
}

TEST_CASE("a file over its cap is refused with the cap in the message") {
  const test::TempDir dir("untrusted-cap");
  const std::string path = write(dir.path / "eleven", "0123456789A");
  CHECK(error_of(path) ==
        path + ": 11B of a test file (valid: a test file of at most 10B; hint: is this the file you meant?)");
  // A sparse file of 3 GiB is refused by its size before a byte is read.
  const std::string big = (dir.path / "sparse").string();
  const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, off_t{3} << 30) == 0);
  ::close(fd);
  CHECK(error_of(big, FileCap{"a plan", 64 << 20}).find("3GiB of a plan (valid: a plan of at most 64MiB") !=
        std::string::npos);
}

TEST_CASE("devices, directories, FIFOs and symlink loops are refused by what they are, without blocking") {
  const test::TempDir dir("untrusted-kinds");
  CHECK(error_of("/dev/zero").starts_with("/dev/zero: a character device, not a regular file"));
  CHECK(error_of(dir.path.string()).starts_with(dir.path.string() + ": a directory, not a regular file"));
  CHECK(error_of((dir.path / "missing").string()) ==
        (dir.path / "missing").string() + ": no such file (hint: check the path)");
  fs::create_symlink(dir.path / "b", dir.path / "a");
  fs::create_symlink(dir.path / "a", dir.path / "b");
  CHECK(error_of((dir.path / "a").string()).find("cannot open file: a loop of symbolic links") != std::string::npos);

  // No writer ever opens the FIFO: a blocking open would wait for ever.
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto refused = std::async(std::launch::async, [&] { return error_of(fifo); });
  if (refused.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int release = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets a blocked open return
    if (release >= 0) ::close(release);
    FAIL("reading a FIFO blocked");
  }
  CHECK(refused.get().starts_with(fifo + ": a FIFO (named pipe), not a regular file"));
}
