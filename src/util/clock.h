// File: clock.h
//
// Wall-clock time as baton stores it: RFC 3339 UTC with milliseconds
// ("2026-11-22T01:38:19.123Z"), and random ids. Thread-safe.

#ifndef BATON_SRC_UTIL_CLOCK_H_
#define BATON_SRC_UTIL_CLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

// Milliseconds since the Unix epoch.
int64_t NowMillis();

// Where the engine's "now" comes from: the system clock, or in tests a clock
// that moves only when told (FakeTime in tests/testing/test_env.h), so that a lease can
// expire without anyone sleeping. Implementations are thread-safe.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() const = 0;
};

// The system clock (NowMillis()).
const TimeSource& SystemTime();
// RFC 3339 UTC with milliseconds.
std::string FormatTime(int64_t millis);
std::string NowRfc3339();
// The milliseconds of a time FormatTime wrote ("2026-11-22T01:38:19.123Z";
// the fraction may be missing); -1 for anything else.
int64_t ParseTime(std::string_view text);

// "<prefix>-" followed by 12 random lowercase hex digits (48 bits), e.g.
// "run-3f9c0a1b2c4d". Uniqueness is checked by the store's primary keys.
std::string NewId(std::string_view prefix);

}  // namespace baton

#endif  // BATON_SRC_UTIL_CLOCK_H_
