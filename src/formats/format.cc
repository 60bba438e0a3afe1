#include "formats/format.h"

namespace baton {
namespace {

constexpr Format kFormats[] = {
    {"sgai", "sgai", ".sgai/state.json", "sgai's workflow state (current and legacy shapes)",
     ReadSgaiState, WriteSgaiState},
    {"genie-wish", "genie", ".genie/state/<slug>.json", "Genie's wish state: groups and dependencies",
     ReadGenieWish, WriteGenieWish},
    {"genie-board", "genie", ".genie/roadmap.json",
     "Genie's board and task export (schemaVersion 1 and 2)",
     ReadGenieBoard, WriteGenieBoard},
    {"graph", "graph", ".graph-state/<id>.json", "@sys/graph workflow checkpoint",
     ReadGraphState, WriteGraphState},
    {"stigmergy", "stigmergy", ".ai/state.json",
     "Stigmergy project ledger (writes 2.0; reads 2.0, 3.0 and 3.1)", ReadStigmergyState,
     WriteStigmergyState},
    {"sinfonia", "sinfonia", ".sinfonica/handoffs/<session>/workflow.md",
     "Sinfonia workflow index (front matter and tables; free-form indexes read too)",
     ReadSinfoniaIndex, WriteSinfoniaIndex},
};

}  // namespace

std::span<const Format> AllFormats() { return kFormats; }

Result<const Format*> FindFormat(std::string_view name) {
  std::string names;
  for (const Format& f : kFormats) {
    if (name == f.name) return &f;
    names += std::string(names.empty() ? "" : ", ") + f.name;
  }
  return InvalidArgumentError("format: unknown format \"" + std::string(name) +
                              "\" (formats: " + names + ")");
}

}  // namespace baton
