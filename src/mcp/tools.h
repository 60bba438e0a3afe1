// File: tools.h
//
// The tools an MCP client sees, all derived from the operation registry.
// Three tool sets:
//   "baton"  every operation as a tool named like it with "_" for "."
//            (run.set_status is run_set_status), its input and output
//            schemas and annotations from the operation;
//   "sgai"   sgai's tools with sgai's names and argument shapes
//            (update_workflow_state, send_message, check_inbox, ...);
//   "genie"  Genie's v5 tools (genie_task_checkout, genie_task_done, ...).
// Seed tools are adapters: each calls one or more registry operations and
// reshapes arguments and results. Which tools a set offers to whom (roles,
// Tool::available) is the set's policy; the rules of the data stay in the
// engine, whichever tool reaches them. Several sets can be
// combined; a name served by two sets is an error at start-up.
//
// A catalogue is built once and then only read; Visible and Call are
// thread-safe.

#ifndef BATON_SRC_MCP_TOOLS_H_
#define BATON_SRC_MCP_TOOLS_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/api.h"

namespace baton::mcp {

// What one tools/call carries besides its arguments.
struct ToolCall {
  const Actor& actor;
  Json arguments;                // an object
  std::string idempotency_key;   // from params._meta, may be empty
  std::string run;               // the run seed tools act on ("" = resolve)
  // Reports progress of a long call (no-op when the client asked for none).
  std::function<void(const std::string& message)> progress;
  // Set when the client cancelled the request or went away.
  const std::atomic<bool>* cancelled = nullptr;
  int64_t progress_interval_ms = 5000;
};

struct Tool {
  std::string name;
  std::string op;  // the operation it calls, for baton's own tools
  std::string title;
  std::string description;
  Json input_schema;
  Json output_schema;  // null: the tool declares none
  Json annotations;
  // Who sees the tool in tools/list (empty: every role; admin sees all).
  std::vector<std::string> roles;
  // The roles it is listed for in the default "baton" set, which offers
  // each role the tools of its work (empty: every role; "all" lists every
  // operation). Tools not listed may still be called by name.
  std::vector<std::string> listed_for;
  // Returns the structured result. A refusal is a Status, which becomes a
  // tool result with isError.
  std::function<Result<Json>(Api&, ToolCall&)> call;
  // The call may block (a wait, a procedure, a question to the human): over
  // HTTP it is answered on an SSE stream carrying its progress; every other
  // call is answered with plain JSON and takes no stream.
  bool may_wait = false;
  // Text for the content block (default: the result as JSON).
  std::function<std::string(const Json&)> text;
  // Listed only while this holds (sgai's ask tools outside self-drive).
  std::function<bool(Api&, const Actor&, const std::string& run)> available;
  // The input schema shown to "actor" when it differs by caller (sgai
  // offers "complete" only to the coordinator).
  std::function<Json(const Actor&)> input_schema_for;
  // Check the arguments against input_schema before calling, so a refusal
  // names the tool's own fields (seed tools; baton's operations check their
  // input themselves).
  bool validate_arguments = false;
};

class ToolCatalog {
 public:
  // InvalidArgument for an unknown set, AlreadyExists for a name served
  // twice.
  static Result<std::unique_ptr<ToolCatalog>> Build(const Registry& registry,
                                                    const std::vector<std::string>& sets);

  // The tools "actor" may see now, in a fixed order (sets in the order
  // given, each sorted by name).
  std::vector<const Tool*> Visible(Api& api, const Actor& actor, const std::string& run) const;
  const Tool* Find(const std::string& name) const;
  const std::vector<std::string>& sets() const { return sets_; }
  // Some tool is listed only at times (Tool::available).
  bool has_gated() const { return has_gated_; }

  // The list entry tools/list returns to "actor": {name, title,
  // description, inputSchema, outputSchema?, annotations}.
  static Json Describe(const Tool& tool, const Actor& actor);

 private:
  std::vector<std::string> sets_;
  bool has_gated_ = false;
  std::vector<Tool> tools_;
  std::map<std::string, size_t> by_name_;
};

// The tool of each operation in "registry" ("baton" set).
std::vector<Tool> BatonTools(const Registry& registry);
// sgai's and Genie's tools (sgai_tools.cc, genie_tools.cc).
std::vector<Tool> SgaiTools(const Registry& registry);
std::vector<Tool> GenieTools(const Registry& registry);

// Whether tools/list offers "tool" to "actor" (by role; admin sees all).
bool OfferedTo(const Tool& tool, const Actor& actor);

// Building blocks of the seed tool sets: a described string argument, an
// object of arguments (no others allowed), and a tool titled "<set>: <name>"
// whose arguments are checked against "input" before it runs.
Json StringArg(const char* description);
Json ArgsObject(Json properties, std::vector<std::string> required);
Tool SeedTool(const char* set, const char* name, const char* description, Json input,
              bool read_only, std::vector<std::string> roles = {});

// The tool name of an operation: "." becomes "_".
std::string ToolNameOf(std::string_view op);

// Calls "op" as the tool's caller, adding the call's idempotency key to a
// mutating operation's input.
Result<Json> CallOp(Api& api, ToolCall& call, std::string_view op, Json input);

// Waits for the answer to question "id" (of "run"): question.wait in slices
// of call.progress_interval_ms, reporting progress between slices, until it
// is answered or withdrawn, or the client cancels the call (Unavailable
// "cancelled by the client"; the question stays open and the next call
// returns its answer).
Result<Json> WaitForAnswer(Api& api, ToolCall& call, const std::string& id,
                           const std::string& run);

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_TOOLS_H_
