// libFuzzer target for Sinfonia's hand-off envelope reader: never crash, and
// every refusal names its source.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/sinfonia_envelope.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton::Result<baton::Json> handoff = baton::ReadSinfoniaEnvelope(text, "fuzz-input");
  if (!handoff.ok() && handoff.status().message().find("fuzz-input") == std::string::npos) {
    std::fprintf(stderr, "refusal without its source: %s\n", handoff.status().message().c_str());
    std::abort();
  }
  if (handoff.ok()) (void)handoff->dump();  // the item is valid JSON text
  return 0;
}
