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
// Flow rules, as sgai applies them (parseFlow, injectCoordinatorEdges,
// detectCycles): nodes without predecessors are entries; an edge
// "coordinator" -> entry is added for every entry other than coordinator
// (none when coordinator is the only entry); a cycle is refused, naming it;
// an empty flow is "coordinator" -> "general-purpose". A flow may name
// "coordinator" itself; if it gives coordinator a predecessor, the injected
// edges close a cycle and the flow is refused, as in sgai.
// Pure: no I/O. Thread-compatible.

#ifndef BATON_SRC_MODEL_SGAI_FLOW_H_
#define BATON_SRC_MODEL_SGAI_FLOW_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/status.h"

namespace baton {

struct GoalDocument {
  nlohmann::json front_matter = nlohmann::json::object();  // YAML as JSON
  std::string body;           // everything after the closing "---" line
  std::string body_checksum;  // lowercase SHA-256 hex of body
};

// Splits and parses GOAL.md as sgai does (splitFrontmatterSections and
// extractBody in cmd/sgai/main.go): front matter exists when the text starts
// with a line "---" (LF or CRLF); it ends at the next line that is exactly
// "---"; the body starts after that line's line ending (the newline after the
// closing "---" is not part of the body). A document that does not start with
// "---" is all body, with an empty front matter. (Older sgai, e.g. at
// sgai-SNAP, ended the front matter at the first "---" anywhere; both agree
// on front matter that holds no "---".)
//
// The YAML becomes JSON: mappings are objects, sequences arrays; quoted
// scalars are strings; plain scalars follow the YAML 1.2 core schema (null,
// true/false, integers, floats), everything else a string, so
// "interactive: yes" stays the string "yes". InvalidArgument
// "GOAL.md: line L[, column C]: <reason>" (L counted in GOAL.md) when the
// opening "---" does not end its line, the front matter is never closed, the
// YAML is invalid, is not a mapping, or repeats a key.
Result<GoalDocument> ParseGoalMarkdown(std::string_view text);

class SgaiFlow {
 public:
  // Parses DOT: a whole "[strict] digraph [name] { ... }", or only its
  // statements as GOAL.md writes them (sgai wraps those in
  // "digraph G { ... }"). Quoted ("a \"b\"") and bare ids, numerals (an id
  // with '-' must be quoted, as in DOT); edge chains a -> b -> c; node
  // statements; ";" or newlines between statements; attribute lists,
  // "graph/node/edge [..]" and "a = b" statements (ignored); subgraphs
  // (flattened; "a -> { b c }" is two edges); ports "a:p" (ignored); "//",
  // "#" and "/* */" comments. An empty "dot" is sgai's default flow.
  // Repeated edges count once. InvalidArgument "flow: line L, column C:
  // <reason>" on a syntax error (L and C count in "dot", from 1),
  // "flow: cycle: a -> b -> a" on a cycle, "flow: no agents" when the
  // statements name no node.
  static Result<SgaiFlow> FromDot(std::string_view dot);
  // The round trip of ToJson. InvalidArgument naming the field when "j" is
  // not such an object, names an unknown agent, or holds a cycle.
  static Result<SgaiFlow> FromJson(const nlohmann::json& j);

  // Agents in first-appearance order, coordinator first (always present).
  const std::vector<std::string>& agents() const { return agents_; }
  // The declared edges in declaration order, then the injected
  // "coordinator" -> entry edges in Entries() order.
  const std::vector<std::pair<std::string, std::string>>& edges() const { return edges_; }
  // Entry nodes before injection: nodes other than coordinator without
  // predecessors, sorted by name (sgai sorts EntryNodes).
  std::vector<std::string> Entries() const { return entries_; }
  // In edges() order; empty for an unknown agent.
  std::vector<std::string> Successors(std::string_view agent) const;
  bool HasAgent(std::string_view agent) const;
  // A known agent without successors (false for an unknown one, as in sgai).
  bool IsTerminal(std::string_view agent) const;

  // {"agents": [...], "edges": [[from, to], ...], "entries": [...]}
  nlohmann::json ToJson() const;

 private:
  std::vector<std::string> agents_;
  std::vector<std::pair<std::string, std::string>> edges_;
  std::vector<std::string> entries_;
};

// Who works next after "current" yields with agent-done, by the rules of
// sgai-RICH's runner as reference/seed-systems.md §1.2 records them:
//  1. "unread_message": "first_unread_recipient" is not empty: its agent
//     wins ("agent:model" ids of multi-model agents name "agent", as
//     extractAgentFromModelID cuts them). It need not be in the flow.
//  2. "terminal_to_coordinator": "current" is terminal: "coordinator".
//  3. "coordinator_to_entry": "current" is coordinator: the first entry
//     (Entries(), sorted by name as sgai sorts them); a flow that names the
//     coordinator itself ("coordinator" -> "a", or the default flow) has no
//     other entry, and rule 4 applies.
//  4. "dag_successor": the first successor of "current", in declaration
//     order.
//  5. "unknown_agent_to_coordinator": "current" is not in the flow.
// Later sgai (the stored dag.go, workflow_runner.go) hands every
// non-terminal agent back to the coordinator instead of rules 3 and 4 and
// routes only by message; baton keeps the flow's meaning, and a caller that
// wants the coordinator-driven style names the target (sgai.handoff --to).
struct NextAgent {
  std::string agent;
  std::string reason;  // "unread_message", "terminal_to_coordinator",
                       // "coordinator_to_entry", "dag_successor",
                       // "unknown_agent_to_coordinator"
};
NextAgent PickNextAgent(const SgaiFlow& flow, std::string_view current,
                        std::string_view first_unread_recipient);

}  // namespace baton

#endif  // BATON_SRC_MODEL_SGAI_FLOW_H_
