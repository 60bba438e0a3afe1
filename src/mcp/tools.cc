#include "mcp/tools.h"

#include <algorithm>

#include "util/clock.h"

namespace baton::mcp {
namespace {

// A human-readable title: "run.set_status" becomes "run: set status".
std::string TitleOf(const std::string& op) {
  std::string title = op;
  const size_t dot = title.find('.');
  if (dot != std::string::npos) title.replace(dot, 1, ": ");
  std::replace(title.begin(), title.end(), '_', ' ');
  return title;
}

}  // namespace

Json StringArg(const char* description) {
  return {{"type", "string"}, {"description", description}};
}

Json ArgsObject(Json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

Tool SeedTool(const char* set, const char* name, const char* description, Json input,
              bool read_only, std::vector<std::string> roles) {
  Tool t;
  t.name = name;
  t.title = std::string(set) + ": " + name;
  t.description = description;
  t.input_schema = std::move(input);
  t.annotations = {{"title", t.title},
                   {"readOnlyHint", read_only},
                   {"destructiveHint", false},
                   {"idempotentHint", read_only}};
  t.roles = std::move(roles);
  t.validate_arguments = true;
  return t;
}

bool OfferedTo(const Tool& tool, const Actor& actor) {
  return tool.roles.empty() || actor.role == "admin" ||
         std::find(tool.roles.begin(), tool.roles.end(), actor.role) != tool.roles.end();
}

std::string ToolNameOf(std::string_view op) {
  std::string name(op);
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

namespace {

// A wait operation (a procedure taking "timeout_ms" and answering
// "timed_out") asked to wait long runs in slices, so the call reports
// progress and ends when the client goes away, as WaitForAnswer does.
bool IsWait(const Operation& op) {
  return static_cast<bool>(op.procedure) && op.input_schema["properties"].contains("timeout_ms");
}

Result<Json> SlicedWait(Api& api, ToolCall& call, const std::string& op) {
  Json input = call.arguments;
  const Json& asked = input.value("timeout_ms", Json());
  const int64_t slice = std::max<int64_t>(call.progress_interval_ms, 1);
  if (!asked.is_number_integer() || asked.get<int64_t>() <= slice) {
    return CallOp(api, call, op, input);  // short, or for the operation to refuse
  }
  const int64_t deadline = NowMillis() + asked.get<int64_t>();
  for (;;) {
    input["timeout_ms"] = std::clamp<int64_t>(deadline - NowMillis(), 0, slice);
    ASSIGN_OR_RETURN(Json out, CallOp(api, call, op, input));
    if (!out.value("timed_out", false) || NowMillis() >= deadline) return out;
    if (call.cancelled != nullptr && call.cancelled->load()) {
      return UnavailableError(op + ": cancelled by the client");
    }
    call.progress("waiting (" + op + ")");
  }
}

}  // namespace

std::vector<Tool> BatonTools(const Registry& registry) {
  std::vector<Tool> tools;
  for (const Operation* op : registry.All()) {
    Json description = Registry::Describe(*op);
    Tool t;
    t.name = ToolNameOf(op->name);
    t.op = op->name;
    t.title = TitleOf(op->name);
    t.description = op->summary + " (operation " + op->name + ")";
    t.input_schema = op->input_schema;
    // Structured results are objects in every version this server speaks.
    if (op->output_schema.value("type", Json()) == "object") t.output_schema = op->output_schema;
    t.annotations = description["annotations"];
    t.annotations["title"] = t.title;
    t.roles = op->roles;
    t.may_wait = static_cast<bool>(op->procedure);
    if (IsWait(*op)) {
      t.call = [name = op->name](Api& api, ToolCall& call) { return SlicedWait(api, call, name); };
    } else {
      t.call = [name = op->name](Api& api, ToolCall& call) -> Result<Json> {
        return CallOp(api, call, name, call.arguments);
      };
    }
    tools.push_back(std::move(t));
  }
  return tools;
}

Result<Json> CallOp(Api& api, ToolCall& call, std::string_view op, Json input) {
  const Operation* operation = api.registry().Find(op);
  if (operation != nullptr && operation->mutating && !operation->procedure &&
      !call.idempotency_key.empty() && !input.contains("idempotency_key")) {
    input["idempotency_key"] = call.idempotency_key;
  }
  return api.Call(op, input, call.actor);
}

Result<Json> WaitForAnswer(Api& api, ToolCall& call, const std::string& id,
                           const std::string& run) {
  Json ref = {{"id", id}, {"timeout_ms", std::max<int64_t>(call.progress_interval_ms, 1)}};
  if (!run.empty()) ref["run"] = run;
  const int64_t started = NowMillis();
  for (;;) {
    ASSIGN_OR_RETURN(Json q, api.Call("question.wait", ref, call.actor));
    if (!q.value("timed_out", false)) return q;
    if (call.cancelled != nullptr && call.cancelled->load()) {
      return UnavailableError("question " + id +
                              ": cancelled by the client; the question stays open and the next "
                              "call returns its answer");
    }
    call.progress("waiting for the human to answer question " + id + " (" +
                  std::to_string((NowMillis() - started) / 1000) + " s)");
  }
}

namespace {

// The default set's tools per role (issue 17): an agent gets what its work
// needs — claim, heartbeat, complete, fail, progress, mail, ask — and a
// coordinator that plus planning runs and tasks; humans and admins get all.
const char* const kAgentWork[] = {
    "agent.heartbeat", "agent.list", "agent.register", "agent.set_status", "chat.history",
    "chat.post",
    "mail.inbox", "mail.read", "mail.send", "mail.wait", "question.ask", "question.show",
    "question.wait", "run.add_progress", "run.list", "run.show", "task.claim", "task.complete",
    "task.dependencies", "task.fail", "task.heartbeat", "task.list", "task.release", "task.show",
};
const char* const kCoordinatorWork[] = {
    "agent.show", "approval.approve", "approval.list", "approval.reject",
    "graph.pause", "graph.resume", "graph.run", "inbox.list", "ledger.events", "mail.list",
    "project.create", "project.list", "question.cancel", "question.list", "run.create",
    "run.patch_context", "run.set_status", "task.add_dependency", "task.create",
    "task.remove_dependency", "task.set_status",
};

// Lists each operation's tool in the default set for the roles whose work
// it is.
void ListForRoles(std::vector<Tool>& tools) {
  auto has = [](const auto& names, const std::string& op) {
    return std::find(std::begin(names), std::end(names), op) != std::end(names);
  };
  for (Tool& t : tools) {
    t.listed_for = {"human", "admin"};
    if (has(kAgentWork, t.op)) t.listed_for.insert(t.listed_for.end(), {"agent", "coordinator"});
    if (has(kCoordinatorWork, t.op)) t.listed_for.push_back("coordinator");
  }
}

}  // namespace

Result<std::unique_ptr<ToolCatalog>> ToolCatalog::Build(const Registry& registry,
                                                        const std::vector<std::string>& sets) {
  std::unique_ptr<ToolCatalog> catalog(new ToolCatalog());
  if (sets.empty()) return InvalidArgumentError("tools: name at least one tool set");
  for (const std::string& set : sets) {
    if (std::find(catalog->sets_.begin(), catalog->sets_.end(), set) != catalog->sets_.end()) {
      continue;
    }
    std::vector<Tool> tools;
    if (set == "baton" || set == "all") {
      // "all" is "baton" without the choice per role; asked for both, "all".
      const bool all = std::find(sets.begin(), sets.end(), "all") != sets.end();
      if (set == "baton" && all) continue;
      tools = BatonTools(registry);
      if (!all) ListForRoles(tools);
    } else if (set == "sgai") {
      tools = SgaiTools(registry);
    } else if (set == "genie") {
      tools = GenieTools(registry);
    } else {
      return InvalidArgumentError("tools: unknown tool set \"" + set +
                                  "\" (known: baton, all, sgai, genie)");
    }
    std::sort(tools.begin(), tools.end(),
              [](const Tool& a, const Tool& b) { return a.name < b.name; });
    for (Tool& t : tools) {
      if (catalog->by_name_.count(t.name) != 0) {
        return AlreadyExistsError("tools: tool " + t.name + " is served by two sets");
      }
      catalog->by_name_[t.name] = catalog->tools_.size();
      catalog->has_gated_ = catalog->has_gated_ || static_cast<bool>(t.available);
      catalog->tools_.push_back(std::move(t));
    }
    catalog->sets_.push_back(set);
  }
  return catalog;
}

std::vector<const Tool*> ToolCatalog::Visible(Api& api, const Actor& actor,
                                              const std::string& run) const {
  std::vector<const Tool*> out;
  for (const Tool& t : tools_) {
    if (!OfferedTo(t, actor)) continue;
    if (!t.listed_for.empty() && std::find(t.listed_for.begin(), t.listed_for.end(),
                                           actor.role) == t.listed_for.end()) {
      continue;
    }
    if (t.available && !t.available(api, actor, run)) continue;
    out.push_back(&t);
  }
  return out;
}

const Tool* ToolCatalog::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tools_[it->second];
}

Json ToolCatalog::Describe(const Tool& tool, const Actor& actor) {
  Json out = {{"name", tool.name},
              {"title", tool.title},
              {"description", tool.description},
              {"inputSchema", tool.input_schema_for ? tool.input_schema_for(actor) : tool.input_schema},
              {"annotations", tool.annotations}};
  if (!tool.output_schema.is_null()) out["outputSchema"] = tool.output_schema;
  return out;
}

}  // namespace baton::mcp
