// libFuzzer target for Sinfonia's hand-off envelope reader: never crash,
// every refusal names its source, and a session folder's envelopes get
// distinct sequences however they are numbered (front matter, file name,
// none), the unreadable ones skipped and named.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "formats/sinfonia_envelope.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* source : {"fuzz-input", "fuzz/dispatch-07-coda.md"}) {
    baton::Result<baton::Json> handoff = baton::ReadSinfoniaEnvelope(text, source);
    if (!handoff.ok() && handoff.status().message().find(source) == std::string::npos) {
      Fail("refusal without its source: " + handoff.status().message());
    }
    if (handoff.ok()) (void)handoff->dump();  // the item is valid JSON text
  }
  baton::Json image = {{"handoffs", baton::Json::array()}};
  const baton::Json envelopes = {{{"name", "fuzz/return-01-amadeus.md"}, {"content", text}},
                                 {{"name", "fuzz/dispatch-01-amadeus.md"}, {"content", text}},
                                 {{"name", "fuzz/notes.md"}, {"content", text}}};
  const std::vector<std::string> skipped = baton::AddSinfoniaEnvelopes(image, envelopes);
  std::set<int64_t> sequences;
  for (const baton::Json& h : image["handoffs"]) {
    if (!h["sequence"].is_number_integer()) Fail("a hand-off without a sequence: " + h.dump());
    sequences.insert(h["sequence"].get<int64_t>());
  }
  // Envelopes merge with one another by id; none is lost without a note.
  if (image["handoffs"].size() + skipped.size() > 3 || skipped.size() > 3) Fail("counted twice");
  if (sequences.size() < image["handoffs"].size() && text.find("sequence") == std::string::npos) {
    Fail("two hand-offs share a sequence nothing in them gave");
  }
  return 0;
}
