// libFuzzer target for graph workflow definitions (src/model/graph_def.h):
// any bytes as a YAML or JSON definition. Beyond not crashing or throwing:
// a refusal names the source on its first line and lists its problems; an
// accepted definition has an entry node that is its first node, and its
// Mermaid diagram is a flowchart made twice the same.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/graph_def.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "graph_fuzz: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  baton::Result<baton::GraphDef> def = baton::ParseGraphDef(text, "fuzz.yaml");
  if (!def.ok()) {
    Check(def.status().code() == baton::StatusCode::kInvalidArgument, "a refusal is InvalidArgument");
    Check(def.status().message().rfind("fuzz.yaml", 0) == 0, "a refusal names the source first");
    return 0;
  }
  Check(!def->nodes.empty(), "an accepted definition has nodes");
  const std::string diagram = baton::GraphMermaid(*def);
  Check(diagram.rfind("flowchart TD", 0) == 0, "the diagram is a flowchart");
  Check(diagram == baton::GraphMermaid(*def), "the diagram is deterministic");
  return 0;
}
