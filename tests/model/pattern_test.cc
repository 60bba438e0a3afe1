// The fast pattern matcher must agree with std::regex on every pattern it
// accepts: a differential test over a table of patterns and inputs.

#include "model/pattern.h"

#include <gtest/gtest.h>

#include <regex>

namespace baton {
namespace {

TEST(PatternTest, AgreesWithStdRegex) {
  const char* patterns[] = {
      "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", "^a*$", "a+b", "^x?y{2,3}$", "[0-9]{3}",
      "^$", "", "ab", "^[a-c]*c$", "[-a]+$", "^a{2,}$", "b$",
  };
  const char* inputs[] = {
      "", "a", "aa", "ab", "aab", "b", "c", "abc", "run-1", "-run", "x.y:z_1",
      "yy", "xyyy", "xyyyy", "123", "12", "a]", "]", "aaaa", "cc", "a b",
      "0123456789012345678901234567890123456789012345678901234567890123456789"
      "0123456789012345678901234567890123456789012345678901234567890123456789",
  };
  for (const char* p : patterns) {
    std::optional<Pattern> compiled = Pattern::Compile(p);
    ASSERT_TRUE(compiled.has_value()) << p;
    EXPECT_TRUE(compiled->is_simple()) << p;
    std::regex re(p, std::regex::ECMAScript);
    for (const char* in : inputs) {
      EXPECT_EQ(compiled->Search(in), std::regex_search(in, re))
          << "pattern " << p << " input \"" << in << "\"";
    }
  }
}

TEST(PatternTest, OtherPatternsFallBackToStdRegex) {
  for (const char* p : {"^(ab)+$", "a|b", "[^a]", "\\d+", "a.c", "a*?", "^[]a]$"}) {
    std::optional<Pattern> compiled = Pattern::Compile(p);
    ASSERT_TRUE(compiled.has_value()) << p;
    EXPECT_FALSE(compiled->is_simple()) << p;
  }
  EXPECT_TRUE(Pattern::Compile("^(ab)+$")->Search("abab"));
  EXPECT_FALSE(Pattern::Compile("^(ab)+$")->Search("aba"));
  EXPECT_FALSE(Pattern::Compile("[unclosed").has_value());
  EXPECT_FALSE(Pattern::Compile("a{3,1}").has_value());
}

}  // namespace
}  // namespace baton
