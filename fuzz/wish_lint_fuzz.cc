// libFuzzer target for Genie's wish linter (model/wish_lint.h). Beyond
// "never crash": every violation points at a line of the text (or the one
// after it), the report is
// sorted by line, column and rule, and the text --fix returns lints again
// without trouble.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "model/wish_lint.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "wish_lint: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void Check(const std::string& text) {
  const baton::WishLintReport report = baton::LintWishMarkdown(text);
  int lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  for (size_t i = 0; i < report.violations.size(); ++i) {
    const baton::WishLintViolation& v = report.violations[i];
    // Genie reports a missing metadata table on the line after the title,
    // which may be one past the end of a one-line wish.
    if (v.line < 1 || v.line > lines + 1 || v.column < 1) Fail("a position outside the text", v.rule);
    if (i > 0) {
      const baton::WishLintViolation& p = report.violations[i - 1];
      if (std::tie(p.line, p.column, p.rule) > std::tie(v.line, v.column, v.rule)) {
        Fail("violations out of order", p.rule + " before " + v.rule);
      }
    }
  }
  // wish.lint refuses text that is not UTF-8 before linting; here it is replaced.
  (void)baton::WishLintJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string fixed = baton::ApplyWishFixes(text, report);
  (void)baton::LintWishMarkdown(fixed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 20)) return 0;  // wish.lint reads at most 1 MiB
  Check(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
