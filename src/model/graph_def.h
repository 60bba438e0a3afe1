// File: graph_def.h
//
// Graph workflow definitions (issue 7, after @sys/graph): a YAML or JSON file
// naming an id, an initial context and nodes, each with a type, the type's
// options, an optional result key, an optional retry policy and its routing —
// a fixed target, ordered {when, goto} cases, or a Lua function — ending in
// END or ERROR. The format and the checks are documented in docs/graph.md.
//
// This file only reads and checks definitions; nothing here runs a node.
// Lua is compiled (luaL_loadbufferx, text chunks only) to find syntax errors
// and never executed. Pure code, no I/O; every function is thread-safe.

#ifndef BATON_SRC_MODEL_GRAPH_DEF_H_
#define BATON_SRC_MODEL_GRAPH_DEF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

// The two terminal targets; neither may name a node.
inline constexpr std::string_view kGraphEnd = "END";
inline constexpr std::string_view kGraphError = "ERROR";

// One routing case: when "when" (a Lua expression over `state`) holds, go to
// "target". A case without "when" is the default and must come last.
struct GraphCase {
  std::optional<std::string> when;
  std::string target;  // a node name, END or ERROR
};

// How a node picks the next one after it ran.
struct GraphRouting {
  enum class Kind {
    kNone,    // missing or unreadable (always a problem)
    kStatic,  // "then: NODE"
    kCases,   // "then: [{when, goto}, ...]"
    kLua,     // "then: {lua: CODE}": a chunk returning the target's name
  };
  Kind kind = Kind::kNone;
  std::string target;            // kStatic
  std::vector<GraphCase> cases;  // kCases, in file order
  std::string lua;               // kLua
};

struct GraphRetry {
  int max = 0;             // extra attempts after a failure, 0..100
  int64_t backoff_ms = 0;  // wait between attempts, 0..3600000
};

struct GraphNode {
  std::string name;
  std::string type;  // "command", "http", ... (FindGraphNodeType)
  // Where the node's result goes in the context. After ParseGraphDef: as
  // written, or the type's default key.
  std::string result_key;
  // Every key of the node other than name, type, resultKey, retry and then.
  // After ParseGraphDef it is checked and holds the type's defaults for the
  // options not written (timeoutMs, method, agentCommand, endpoint).
  Json options = Json::object();
  GraphRetry retry;
  GraphRouting then;
};

struct GraphDef {
  std::string id;
  std::string description;
  std::string source;  // the file name given to ParseGraphDef
  Json initial_context = Json::object();
  std::vector<GraphNode> nodes;  // in file order; nodes[0] is the entry

  // The entry node's name ("" when there are no nodes).
  const std::string& entry() const;
  // nullptr when no node has that name.
  const GraphNode* Find(std::string_view name) const;
};

// One thing wrong with a definition. "node" is the node's name (or
// "nodes[3]" when it has none; "" for the document), "field" the path inside
// it (e.g. "then[1].goto", "env.A"; "" for the node as a whole).
struct GraphProblem {
  std::string node;
  std::string field;
  std::string message;
};

// A node type: its default result key, and the defaults ParseGraphDef fills
// into "options" (a JSON object's text).
struct GraphNodeType {
  std::string_view name;
  std::string_view result_key;
  std::string_view defaults;
};

// The known node types, in documentation order.
const std::vector<GraphNodeType>& GraphNodeTypes();
// nullptr for an unknown type.
const GraphNodeType* FindGraphNodeType(std::string_view type);

// Reads a definition from YAML, or from JSON when the text starts with '{'
// (JSON errors then come from ParseJson, with its line and column). "source"
// names the file in every message.
//
// Text that is not YAML or JSON at all is an InvalidArgument
// "<source>: not valid YAML: line L, column C: <reason>" (1-based). Otherwise
// every problem in the document is collected — shape errors here, then
// FindGraphProblems — and any problem makes the result the InvalidArgument
// described at GraphProblemsStatus. A clean definition comes back with the
// type defaults filled in (see GraphNode).
Result<GraphDef> ParseGraphDef(std::string_view text, std::string_view source);

// The static checks, all of them, in node order: the id and at least one
// node; names ([A-Za-z][A-Za-z0-9_-]*, not END or ERROR, none defined twice);
// known types; each type's required options, unknown option keys and option
// values; result keys; retry ranges; routing targets that exist, cases with a
// non-last default; Lua that does not compile (case conditions as
// "return (<when>)", lua routing, eval code, build, http body); and, when no
// node routes by Lua, every node not reachable from the entry.
std::vector<GraphProblem> FindGraphProblems(const GraphDef& def);

// OK when "problems" is empty. Otherwise an InvalidArgument whose message is
// "<source>: N problem(s) in the graph definition" followed by one line per
// problem, "<source>: node NAME: FIELD: MESSAGE" (without "node NAME: " or
// "FIELD: " when those are empty), and whose details are
// {"source", "problems": [{"node", "field", "message"}], "omitted"}. Only the
// first 100 problems are listed, in the message and the details; "omitted"
// counts the rest (and the message ends "... and N more").
Status GraphProblemsStatus(std::string_view source, const std::vector<GraphProblem>& problems);

// GraphProblemsStatus(def.source, FindGraphProblems(def)).
Status CheckGraphDef(const GraphDef& def);

// A Mermaid "flowchart TD" of "def": a start marker into the entry node, a
// box per node labelled "NAME<br/>type", the END and ERROR terminals that are
// targets, static edges "A --> B", case edges labelled with their condition
// (escaped, cut to 40 characters) or "else", and for Lua routing a dotted
// edge to a "?" marker. The same definition always gives the same text.
std::string GraphMermaid(const GraphDef& def);

// One execution of a run, as its checkpoint records it.
struct GraphStep {
  int64_t seq = 0;
  std::string node;     // "" for a start, fork or reset checkpoint
  std::string next;     // where the run went from there
  std::string outcome;  // completed, failed, start, forked, reset
};

struct GraphPath {
  std::vector<GraphStep> steps;  // oldest first
  std::string current;           // the node the run stands at ("" when it ended)
};

// GraphMermaid(def) with a run's path drawn on it: each node that ran says
// how often ("ran 3x"); each transition taken is a thick edge labelled with
// the executions that took it ("#4, #6"); nodes that ran are class
// "visited", those whose routing failed "failed", the current one "current".
std::string GraphPathMermaid(const GraphDef& def, const GraphPath& path);

}  // namespace baton

#endif  // BATON_SRC_MODEL_GRAPH_DEF_H_
