// File: graph_nodes.h
//
// What each graph node type does when it runs, and where a node routes after
// it ran (docs/graph.md "Node types", "Routing"). Nothing here touches the
// store: the runner (src/ops/graph_runner.cc) commits what a node returns as
// one checkpoint. Node effects outside baton — commands, agents, HTTP —
// happen here, outside any transaction.
//
// A node always produces a result, also when what it ran failed: a command
// that exits 1 stores its exit code, output and success=false, and routing
// decides what follows (the seed engine threw before storing it). Only a
// routing failure — a Lua router that errs, a target that does not exist,
// no case that holds — stops a run, as failed.
//
// A graph state, as given to these functions and to Lua, is
// {currentNode, status, context, conversationHistory}.

#ifndef BATON_SRC_ENGINE_GRAPH_GRAPH_NODES_H_
#define BATON_SRC_ENGINE_GRAPH_GRAPH_NODES_H_

#ifndef BATON_ENGINE_ROOM_GRAPH
#error "engine/graph/ is above this target: link baton_engine_graph (src/engine/README.md)"
#endif

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baton/status.h"
#include "model/graph_def.h"
#include "util/clock.h"
#include "util/json_util.h"

namespace baton {

struct GraphExecEnv {
  std::string run_id;
  int64_t seq = 0;      // the execution's number in the run
  int attempt = 1;      // 1 for the first try of this execution
  std::string workdir;  // where relative cwd options start; "" = ours
  const TimeSource* time = &SystemTime();  // the messages' timestamps
  // Asks a human node's question — {question, choices?, multiSelect?} — and
  // waits for the answer, returning the answered question (question.show's
  // shape). Set by the runner; a human node fails without it.
  std::function<Result<Json>(const Json& question)> ask_human;
  // Records the process group a command node's program runs in — its id
  // and its leader's start (util/subprocess.h on_start) — before the
  // program starts; an error stops the node (the program never runs). Set
  // by the runner, so that a resume can end what a killed runner left.
  std::function<Status(int64_t pgid, int64_t start_ticks)> on_process_start;
};

struct GraphNodeOutcome {
  Json result;                        // stored under the node's result key
  Json updates = Json::object();      // other context keys the node set (eval)
  std::vector<std::string> removed;   // context keys the node removed (eval)
  Json history_append = Json::array();
  bool success = true;                // false: worth a retry, if the node has any
  std::string error;                  // why success is false
};

// Runs "node" once over "state". Errors only for what no result can carry
// (a human node without ask_human); everything else is in the outcome.
Result<GraphNodeOutcome> ExecuteGraphNode(const GraphNode& node, const Json& state,
                                          const GraphExecEnv& env);

// The target "node" routes to over "state" (the state after it ran): a node
// name, END or ERROR. FailedPrecondition naming the node and field when a
// condition or router errs, a router returns something that is not a target
// of "def", or no case holds.
Result<std::string> RouteGraphNode(const GraphDef& def, const GraphNode& node, const Json& state);

// "text" with each {{context.a.b}} replaced by that value of the context:
// strings as they are, other values as JSON, missing ones as "".
std::string RenderGraphTemplate(const std::string& text, const Json& context);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_GRAPH_GRAPH_NODES_H_
