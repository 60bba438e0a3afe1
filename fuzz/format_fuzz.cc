// libFuzzer target for one seed-format reader (BATON_FUZZ_FORMAT names it).
// Beyond "never crash", it checks the property the formats promise: what a
// writer writes, its own reader reads, and writing that again gives the same
// bytes (writers are canonical).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/format.h"

namespace {

const baton::Format& TheFormat() {
  static const baton::Format* format = [] {
    auto f = baton::FindFormat(BATON_FUZZ_FORMAT);
    if (!f.ok()) {
      std::fprintf(stderr, "%s\n", f.status().message().c_str());
      std::abort();
    }
    return *f;
  }();
  return *format;
}

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n%s\n", BATON_FUZZ_FORMAT, what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const baton::Format& format = TheFormat();
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton::Result<baton::RunImage> image = format.read(text, "fuzz-input");
  if (!image.ok()) {
    if (image.status().message().find("fuzz-input") == std::string::npos) {
      Fail("a refusal that does not name the source", image.status().message());
    }
    return 0;
  }
  baton::Result<baton::FormatOutput> written = format.write(*image);
  if (!written.ok()) return 0;  // an image the format cannot express
  baton::Result<baton::RunImage> again = format.read(written->text, "fuzz-written");
  if (!again.ok()) Fail("cannot read its own output", again.status().message() + "\n" + written->text);
  baton::Result<baton::FormatOutput> rewritten = format.write(*again);
  if (!rewritten.ok()) Fail("cannot write what it read back", rewritten.status().message());
  if (rewritten->text != written->text) {
    Fail("writing is not canonical", written->text + "\n----\n" + rewritten->text);
  }
  return 0;
}
