// File: graph_runner.h
//
// The graph runner (docs/graph.md "Running"): the procedures behind
// graph.run and graph.resume. Each loads a definition, takes the run
// (graph.start or graph.take_over), and then, node by node, runs the node
// outside any transaction, routes on the merged state and commits one
// checkpoint (graph.commit) — until END, ERROR, a pause, a cancel, or a
// human node whose answer it was told not to wait for. Ops-internal.

#ifndef BATON_SRC_OPS_GRAPH_RUNNER_H_
#define BATON_SRC_OPS_GRAPH_RUNNER_H_

#include <string>

#include "model/graph_def.h"
#include "ops/registry.h"

namespace baton {

// The most a definition file or text may hold.
inline constexpr int64_t kMaxGraphDefinitionBytes = int64_t{4} << 20;

struct LoadedGraph {
  GraphDef def;
  std::string text;
  std::string file;  // "" for a definition given as text
};

// Reads the definition the input names — "file" (.yaml, .yml or .json) or
// "text", never both — and checks it. "source" names the text in messages.
Result<LoadedGraph> LoadGraphDefinition(const Json& in);

Result<Json> RunGraph(OpRunner& runner, const Json& in);     // graph.run
Result<Json> ResumeGraph(OpRunner& runner, const Json& in);  // graph.resume

}  // namespace baton

#endif  // BATON_SRC_OPS_GRAPH_RUNNER_H_
