// Units in values: every accepted spelling parses to SI base units, formatting parses back,
// and errors name the field, the text and the valid units.
#include <catch2/catch.hpp>

#include <limits>

#include "common/error.hpp"
#include "common/units.hpp"

using namespace burst;

TEST_CASE("bandwidths parse in bytes and bits per second") {
  CHECK(units::parse_bandwidth("200GBps", "f") == Approx(200e9));
  CHECK(units::parse_bandwidth("25GB/s", "f") == Approx(25e9));
  // 200 Gbit/s = 25 GB/s (8 bits per byte).
  CHECK(units::parse_bandwidth("200Gbps", "f") == Approx(25e9));
  CHECK(units::parse_bandwidth("1 GiBps", "f") == Approx(1073741824.0));
  CHECK(units::parse_bandwidth("0.5TBps", "f") == Approx(5e11));
}

TEST_CASE("durations, sizes and FLOP rates parse") {
  CHECK(units::parse_duration("2us", "f") == Approx(2e-6));
  CHECK(units::parse_duration("1.5ms", "f") == Approx(1.5e-3));
  CHECK(units::parse_duration("700ns", "f") == Approx(7e-7));
  CHECK(units::parse_bytes("80GiB", "f") == Approx(80.0 * 1024 * 1024 * 1024));
  CHECK(units::parse_bytes("80GB", "f") == Approx(80e9));
  CHECK(units::parse_flop_rate("312TFLOPS", "f") == Approx(312e12));
  CHECK(units::parse_flop_rate("1.2PFLOPS", "f") == Approx(1.2e15));
}

TEST_CASE("token counts use binary prefixes") {
  CHECK(units::parse_tokens("1M", "--seq") == 1048576);
  CHECK(units::parse_tokens("512K", "--seq") == 524288);
  CHECK(units::parse_tokens("4096", "--seq") == 4096);
  CHECK(units::format_tokens(1048576) == "1M");
  CHECK(units::format_tokens(3 * 1024) == "3K");
  CHECK(units::format_tokens(1000) == "1000");
  CHECK_THROWS_AS(units::parse_tokens("1.5", "--seq"), Error);
}

TEST_CASE("formatting round-trips through parsing") {
  for (double v : {200e9, 25e9, 12.5e9, 1.0, 3.3e3}) {
    CHECK(units::parse_bandwidth(units::format_bandwidth(v), "f") == Approx(v).epsilon(1e-6));
  }
  for (double v : {2e-6, 7e-7, 1.5e-3, 3.0}) {
    CHECK(units::parse_duration(units::format_duration(v), "f") == Approx(v).epsilon(1e-6));
  }
  for (double v : {80.0 * 1073741824.0, 141e9, 512.0, 2.0 * 1048576}) {
    CHECK(units::parse_bytes(units::format_bytes(v), "f") == Approx(v).epsilon(1e-6));
  }
  CHECK(units::format_bandwidth(200e9) == "200GBps");
  CHECK(units::format_duration(2e-6) == "2us");
  CHECK(units::format_bytes(80.0 * 1073741824.0) == "80GiB");
  CHECK(units::format_flop_rate(312e12) == "312TFLOPS");
}

TEST_CASE("unit errors name the field, the text and the valid units") {
  try {
    (void)units::parse_bandwidth("200GBs", "topo.json:/node/links/3/bandwidth");
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 1);
    const auto& p = e.problems().front();
    CHECK(p.where == "topo.json:/node/links/3/bandwidth");
    CHECK(p.what == "'200GBs': unknown unit 'GBs'");
    CHECK(p.valid.find("GBps") != std::string::npos);
    CHECK(p.valid.find("Gbps") != std::string::npos);
  }
  CHECK_THROWS_WITH(units::parse_duration("fast", "lat"), Catch::Contains("does not start with a number"));
  CHECK_THROWS_WITH(units::parse_bytes("80", "mem"), Catch::Contains("has no unit"));
  CHECK_THROWS_WITH(units::parse_bytes("-1GB", "mem"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(units::parse_flop_rate("inf TFLOPS", "peak"), Catch::Contains("peak"));
  // Finite as written, infinite once scaled by the unit: still an error, never infinity.
  CHECK_THROWS_WITH(units::parse_bandwidth("1e300TBps", "bw"), Catch::Contains("too large"));
  // Beyond a double as written: out of range, not "does not start with a number".
  CHECK_THROWS_WITH(units::parse_bandwidth("1e400GBps", "bw"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(units::parse_duration("1e-400s", "lat"), Catch::Contains("out of range"));
}

TEST_CASE("human_bytes scales to the largest unit the value reaches") {
  CHECK(units::human_bytes(80.0 * 1024 * 1024 * 1024) == "80.0 GiB");
  CHECK(units::human_bytes(1024.0 * 1024 * 1024) == "1.0 GiB");
  CHECK(units::human_bytes(640.0 * 1024 * 1024) == "640.0 MiB");  // was "0.6 GiB"
  CHECK(units::human_bytes(1.5 * 1024 * 1024) == "1.5 MiB");      // was "0.0 GiB"
  CHECK(units::human_bytes(2048) == "2.0 KiB");
  CHECK(units::human_bytes(512) == "512 B");
  CHECK(units::human_bytes(0) == "0 B");
  CHECK(units::human_bytes(std::numeric_limits<double>::infinity()) == "n/a");
}
