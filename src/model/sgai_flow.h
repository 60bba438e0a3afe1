// File: sgai_flow.h
//
// sgai's agent flow (cmd/sgai/dag.go) and its GOAL.md. GOAL.md is YAML front
// matter between "---" lines and a Markdown body; the front matter's "flow"
// is a Graphviz DOT digraph (or "@file", resolved by the caller), "models"
// maps agents to a model spec or a list of specs, plus alias,
// completionGateScript, retrospective, continuousModePrompt, ... The goal
// checksum is SHA-256 hex over the body only, so editing the front matter
// does not restart a workflow (sgai's canResumeWorkflow).
//
// Flow rules, as sgai applies them: nodes without predecessors are entries;
// an edge "coordinator" -> entry is added for every entry; a cycle is
// refused, naming it; an empty flow is "coordinator" -> "general-purpose".
// Pure: no I/O.

#ifndef BATON_SRC_MODEL_SGAI_FLOW_H_
#define BATON_SRC_MODEL_SGAI_FLOW_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/status.h"

namespace baton {

struct GoalDocument {
  nlohmann::json front_matter = nlohmann::json::object();  // YAML as JSON
  std::string body;           // everything after the closing "---"
  std::string body_checksum;  // SHA-256 hex of body
};

// InvalidArgument naming the line when the front matter is not valid YAML or
// not a mapping. A document without front matter is all body.
Result<GoalDocument> ParseGoalMarkdown(std::string_view text);

class SgaiFlow {
 public:
  // Parses DOT: a whole digraph, or only its statements as GOAL.md writes them
  // (sgai wraps those in "digraph G { ... }"). Edge chains a -> b -> c,
  // node statements, attributes, comments, quoted ids). InvalidArgument
  // naming the line and column of a syntax error, or the cycle.
  static Result<SgaiFlow> FromDot(std::string_view dot);
  // The round trip of ToJson.
  static Result<SgaiFlow> FromJson(const nlohmann::json& j);

  // Agents in first-appearance order, coordinator first.
  const std::vector<std::string>& agents() const { return agents_; }
  // Edges after entry injection, in declaration order.
  const std::vector<std::pair<std::string, std::string>>& edges() const { return edges_; }
  // Entry nodes (before injection: nodes other than coordinator without predecessors).
  std::vector<std::string> Entries() const;
  std::vector<std::string> Successors(std::string_view agent) const;
  bool HasAgent(std::string_view agent) const;
  // No successors.
  bool IsTerminal(std::string_view agent) const;

  // {"agents": [...], "edges": [[from, to], ...], "entries": [...]}
  nlohmann::json ToJson() const;

 private:
  std::vector<std::string> agents_;
  std::vector<std::pair<std::string, std::string>> edges_;
};

// Who works next after "current" yields (sgai's runner): the recipient of
// the first unread message wins; else a terminal agent hands to the
// coordinator; the coordinator hands to the first entry; else the first DAG
// successor. "reason" says which rule chose.
struct NextAgent {
  std::string agent;
  std::string reason;  // "unread_message", "terminal_to_coordinator",
                       // "coordinator_to_entry", "dag_successor"
};
NextAgent PickNextAgent(const SgaiFlow& flow, std::string_view current,
                        std::string_view first_unread_recipient);

}  // namespace baton

#endif  // BATON_SRC_MODEL_SGAI_FLOW_H_
