#include "util/clock.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

namespace baton {

int64_t NowMillis() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatTime(int64_t millis) {
  std::time_t secs = static_cast<std::time_t>(millis / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(millis % 1000));
  return buf;
}

std::string NowRfc3339() { return FormatTime(NowMillis()); }

const TimeSource& SystemTime() {
  class System final : public TimeSource {
   public:
    int64_t NowMillis() const override { return ::baton::NowMillis(); }
  };
  static const System* const kSystem = new System();
  return *kSystem;
}

int64_t ParseTime(std::string_view text) {
  std::tm tm{};
  int millis = 0;
  int used = 0;
  const std::string s(text.substr(0, 40));
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6) {
    return -1;
  }
  if (s.size() > static_cast<size_t>(used) + 4 && s[used] == '.') {
    millis = std::atoi(s.substr(used + 1, 3).c_str());
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

std::string NewId(std::string_view prefix) {
  // One generator per thread, seeded from the OS: ids from many processes
  // started in the same millisecond must still differ.
  thread_local std::mt19937_64 gen{std::random_device{}()};
  uint64_t bits = gen() & 0xffffffffffffULL;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(bits));
  return std::string(prefix) + "-" + buf;
}

}  // namespace baton
