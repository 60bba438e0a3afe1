#include "engine/graph/graph_nodes.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <thread>

#include <httplib.h>

#include "model/graph_lua.h"
#include "util/clock.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

std::string Opt(const GraphNode& node, const char* key) {
  auto it = node.options.find(key);
  return it != node.options.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t TimeoutOf(const GraphNode& node) { return node.options.value("timeoutMs", int64_t{300000}); }

// A relative cwd starts at the run's working directory.
std::string CwdOf(const GraphNode& node, const GraphExecEnv& env) {
  std::string cwd = Opt(node, "cwd");
  if (cwd.empty()) return env.workdir;
  if (!env.workdir.empty() && std::filesystem::path(cwd).is_relative()) {
    return (std::filesystem::path(env.workdir) / cwd).lexically_normal().string();
  }
  return cwd;
}

// Our environment, then the node's "env", then the run's coordinates.
std::vector<std::string> EnvOf(const GraphNode& node, const GraphExecEnv& env) {
  Json vars = Json::object();
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq != std::string_view::npos) vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  if (auto it = node.options.find("env"); it != node.options.end() && it->is_object()) {
    for (auto v = it->begin(); v != it->end(); ++v) vars[v.key()] = v.value();
  }
  vars["BATON_RUN_ID"] = env.run_id;
  vars["BATON_GRAPH_NODE"] = node.name;
  vars["BATON_GRAPH_SEQ"] = std::to_string(env.seq);
  vars["BATON_GRAPH_ATTEMPT"] = std::to_string(env.attempt);
  std::vector<std::string> out;
  for (auto it = vars.begin(); it != vars.end(); ++it) {
    out.push_back(it.key() + "=" + it.value().get<std::string>());
  }
  return out;
}

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;
  int64_t duration = 0;
};

// Runs argv; a program that cannot start or runs too long is an exit code
// (127, 124 as a shell reports them) with the reason on stderr.
Ran RunArgv(std::vector<std::string> argv, const GraphNode& node, const GraphExecEnv& env) {
  const auto start = std::chrono::steady_clock::now();
  Ran ran;
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = EnvOf(node, env);
  options.cwd = CwdOf(node, env);
  options.timeout_ms = TimeoutOf(node);
  options.on_start = env.on_process_start;  // each program in a group of its own, recorded
  std::error_code ec;
  if (!options.cwd.empty() && !std::filesystem::is_directory(options.cwd, ec)) {
    ran.exit_code = 127;
    ran.err = "cwd: " + options.cwd + " is not a directory";
  } else if (Result<SubprocessResult> r = RunSubprocess(options); r.ok()) {
    ran.exit_code = r->exit_code;
    ran.out = std::move(r->out);
    ran.err = std::move(r->err);
  } else if (r.status().code() == StatusCode::kDeadlineExceeded) {
    ran.exit_code = 124;
    ran.timed_out = true;
    ran.err = "timed out after " + std::to_string(options.timeout_ms) + " ms";
  } else {
    ran.exit_code = 127;
    ran.err = std::string(r.status().message());
  }
  ran.duration = MillisSince(start);
  return ran;
}

Json CommandResult(const Ran& ran) {
  Json r = {{"exitCode", ran.exit_code},
            {"stdout", ran.out},
            {"stderr", ran.err},
            {"success", ran.exit_code == 0},
            {"duration", ran.duration}};
  if (ran.timed_out) r["timedOut"] = true;
  return r;
}

GraphNodeOutcome Failed(Json result, std::string error) {
  GraphNodeOutcome out;
  result["success"] = false;
  result["error"] = error;
  out.result = std::move(result);
  out.success = false;
  out.error = std::move(error);
  return out;
}

GraphNodeOutcome FromResult(Json result) {
  GraphNodeOutcome out;
  out.success = result.value("success", false);
  if (!out.success) {
    out.error = result.value("error", "");
    if (out.error.empty() && result.contains("exitCode")) {
      out.error = "exit code " + std::to_string(result["exitCode"].get<int64_t>());
    }
  }
  out.result = std::move(result);
  return out;
}

// A build chunk's string: the command or the prompt.
Result<std::string> BuildString(const GraphNode& node, const Json& state) {
  ASSIGN_OR_RETURN(GraphLuaResult r, RunGraphLua(Opt(node, "build"), node.name + ".build", state, false));
  if (!r.value.is_string()) {
    return FailedPreconditionError(node.name + ".build: must return a string, not " +
                                   std::string(r.value.type_name()));
  }
  return r.value.get<std::string>();
}

GraphNodeOutcome RunCommand(const GraphNode& node, const std::string& command,
                            const GraphExecEnv& env) {
  return FromResult(CommandResult(RunArgv({"/bin/sh", "-c", command}, node, env)));
}

std::vector<std::string> AgentArgv(const GraphNode& node) {
  std::vector<std::string> argv;
  if (auto it = node.options.find("agentCommand"); it != node.options.end() && it->is_array()) {
    for (const Json& a : *it) argv.push_back(a.get<std::string>());
  }
  if (argv.empty()) argv = {"claude", "-p"};
  return argv;
}

Json Message(const GraphExecEnv& env, const std::string& type, const std::string& content,
             Json metadata) {
  return {{"type", type},
          {"content", content},
          {"timestamp", FormatTime(env.time->NowMillis())},
          {"metadata", std::move(metadata)}};
}

GraphNodeOutcome RunAgent(const GraphNode& node, const std::string& prompt, const GraphExecEnv& env) {
  std::vector<std::string> argv = AgentArgv(node);
  argv.push_back(prompt);
  Ran ran = RunArgv(std::move(argv), node, env);
  GraphNodeOutcome out = FromResult({{"success", ran.exit_code == 0},
                                     {"output", ran.out},
                                     {"exitCode", ran.exit_code},
                                     {"stderr", ran.err},
                                     {"prompt", prompt},
                                     {"duration", ran.duration}});
  const Json meta = {{"node", node.name}, {"seq", env.seq}};
  out.history_append.push_back(Message(env, "user", prompt, meta));
  Json answer_meta = meta;
  answer_meta["exitCode"] = ran.exit_code;
  out.history_append.push_back(Message(env, "assistant", ran.out, answer_meta));
  return out;
}

GraphNodeOutcome RunSlashCommand(const GraphNode& node, const GraphExecEnv& env) {
  std::vector<std::string> argv = AgentArgv(node);
  argv.push_back(Opt(node, "command"));
  Ran ran = RunArgv(std::move(argv), node, env);
  Json result = {{"success", ran.exit_code == 0},
                 {"output", ran.out},
                 {"error", ran.exit_code == 0 ? "" : (ran.err.empty() ? "exit code " + std::to_string(ran.exit_code) : ran.err)},
                 {"exitCode", ran.exit_code},
                 {"duration", ran.duration},
                 {"filesAffected", Json::array()}};
  return FromResult(std::move(result));
}

GraphNodeOutcome RunEval(const GraphNode& node, const Json& state) {
  const auto start = std::chrono::steady_clock::now();
  Result<GraphLuaResult> r = RunGraphLua(Opt(node, "code"), node.name + ".code", state, true);
  if (!r.ok()) {
    return Failed({{"updatedKeys", Json::array()}, {"duration", MillisSince(start)}},
                  std::string(r.status().message()));
  }
  const Json& before = state["context"];
  // Read in place: the context may be large, and a chunk that replaced
  // `state` with something else fails the node rather than the runner.
  static const Json kNoContext = Json::object();
  const auto found =
      r->state.is_object() ? r->state.find("context") : r->state.end();
  const Json& after = r->state.is_object() && found != r->state.end() ? *found : kNoContext;
  if (!r->state.is_object() || !after.is_object()) {
    return Failed({{"updatedKeys", Json::array()}, {"duration", MillisSince(start)}},
                  node.name + ".code: state and state.context must stay tables");
  }
  GraphNodeOutcome out;
  Json updated = Json::array();
  for (auto it = after.begin(); it != after.end(); ++it) {
    if (it.key().rfind("__", 0) == 0) continue;  // the engine's own keys
    auto old = before.find(it.key());
    if (old == before.end() || *old != it.value()) {
      out.updates[it.key()] = it.value();
      updated.push_back(it.key());
    }
  }
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (!after.contains(it.key()) && it.key().rfind("__", 0) != 0) {
      out.removed.push_back(it.key());
      updated.push_back(it.key());
    }
  }
  // An eval may append to the conversation (it cannot rewrite it).
  const Json& old_history = state["conversationHistory"];
  const Json new_history = r->history_appended
                               ? Json()
                               : r->state.value("conversationHistory", Json::array());
  if (r->history_appended) {
    for (Json& m : *r->history_appended) out.history_append.push_back(std::move(m));
  } else if (new_history.is_array() && new_history.size() > old_history.size()) {
    for (size_t i = old_history.size(); i < new_history.size(); ++i) {
      out.history_append.push_back(new_history[i]);
    }
  }
  out.result = {{"success", true}, {"updatedKeys", updated}, {"duration", MillisSince(start)}};
  return out;
}

struct Url {
  std::string origin;  // scheme://host[:port]
  std::string path;    // "/..." with the query
};

Result<Url> SplitUrl(std::string url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return InvalidArgumentError("url: " + url + " has no scheme");
  url = url.substr(0, url.find('#'));  // a fragment is never sent
  const size_t rest = url.find_first_of("/?", scheme + 3);
  if (rest == std::string::npos) return Url{url, "/"};
  const std::string path = url.substr(rest);
  return Url{url.substr(0, rest), path[0] == '?' ? "/" + path : path};
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

struct HttpReply {
  int status = 0;
  std::string reason;
  Json headers = Json::object();
  std::string body;
  std::string error;
};

HttpReply SendHttp(const std::string& method, const std::string& url, const Json& headers,
                   const std::string& body, int64_t timeout_ms) {
  HttpReply reply;
  Result<Url> u = SplitUrl(url);
  if (!u.ok()) {
    reply.error = std::string(u.status().message());
    return reply;
  }
  httplib::Client client(u->origin);
  const time_t sec = static_cast<time_t>(timeout_ms / 1000);
  const time_t usec = static_cast<time_t>((timeout_ms % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  httplib::Headers h;
  std::string content_type = "application/json";
  for (auto it = headers.begin(); it != headers.end(); ++it) {
    if (EqualsIgnoreCase(it.key(), "Content-Type")) {
      content_type = it.value().get<std::string>();
    } else {
      h.emplace(it.key(), it.value().get<std::string>());
    }
  }
  auto send = [&]() -> httplib::Result {
    if (method == "GET") return client.Get(u->path, h);
    if (method == "DELETE") return client.Delete(u->path, h, body, content_type);
    if (method == "POST") return client.Post(u->path, h, body, content_type);
    if (method == "PUT") return client.Put(u->path, h, body, content_type);
    return client.Patch(u->path, h, body, content_type);
  };
  httplib::Result res = send();
  if (!res) {
    reply.error = httplib::to_string(res.error());
    return reply;
  }
  reply.status = res->status;
  reply.reason = res->reason;
  for (const auto& [k, v] : res->headers) reply.headers[k] = v;
  reply.body = res->body;
  return reply;
}

// The body as JSON when it is JSON, else as text.
Json BodyData(const std::string& body) {
  Result<Json> parsed = ParseJson(body, "body");
  if (parsed.ok()) return *parsed;
  return body;
}

GraphNodeOutcome RunHttp(const GraphNode& node, const Json& state) {
  const auto start = std::chrono::steady_clock::now();
  std::string body;
  if (!Opt(node, "body").empty()) {
    Result<GraphLuaResult> r = RunGraphLua(Opt(node, "body"), node.name + ".body", state, false);
    if (!r.ok()) return Failed({{"status", 0}, {"duration", MillisSince(start)}}, std::string(r.status().message()));
    body = r->value.is_string() ? r->value.get<std::string>() : DumpJson(r->value);
  }
  HttpReply reply = SendHttp(node.options.value("method", "GET"), Opt(node, "url"),
                             node.options.value("headers", Json::object()), body, TimeoutOf(node));
  Json result = {{"success", reply.error.empty() && reply.status >= 200 && reply.status < 300},
                 {"status", reply.status},
                 {"statusText", reply.reason},
                 {"headers", reply.headers},
                 {"data", BodyData(reply.body)},
                 {"duration", MillisSince(start)}};
  if (!reply.error.empty()) {
    result["error"] = reply.error;
  } else if (!result["success"].get<bool>()) {
    result["error"] = "HTTP " + std::to_string(reply.status) + " " + reply.reason;
  }
  return FromResult(std::move(result));
}

GraphNodeOutcome RunLlm(const GraphNode& node, const Json& state) {
  const auto start = std::chrono::steady_clock::now();
  const std::string prompt = RenderGraphTemplate(Opt(node, "prompt"), state["context"]);
  const std::string model = Opt(node, "model");
  Json headers = Json::object();
  if (const std::string key_env = Opt(node, "apiKeyEnv"); !key_env.empty()) {
    const char* key = std::getenv(key_env.c_str());
    if (key == nullptr || *key == '\0') {
      return Failed({{"output", ""}, {"model", model}, {"duration", 0}},
                    "apiKeyEnv: the environment variable " + key_env + " is not set");
    }
    headers["Authorization"] = std::string("Bearer ") + key;
  }
  const Json request = {{"model", model},
                        {"messages", Json::array({{{"role", "user"}, {"content", prompt}}})}};
  HttpReply reply = SendHttp("POST", Opt(node, "endpoint"), headers, DumpJson(request), TimeoutOf(node));
  Json raw = BodyData(reply.body);
  Json result = {{"success", false},
                 {"output", ""},
                 {"rawOutput", raw},
                 {"model", model},
                 {"usage", Json::object()},
                 {"duration", MillisSince(start)}};
  if (!reply.error.empty()) {
    result["error"] = reply.error;
  } else if (reply.status < 200 || reply.status >= 300) {
    result["error"] = "HTTP " + std::to_string(reply.status) + " " + reply.reason;
  } else if (!raw.is_object() || !raw.contains("choices") || !raw["choices"].is_array() ||
             raw["choices"].empty()) {
    result["error"] = "the reply has no choices";
  } else if (!raw["choices"][0].is_object() || !raw["choices"][0].contains("message") ||
             !raw["choices"][0]["message"].is_object()) {
    result["error"] = "the reply's choices[0] has no message";
  } else {
    const Json& message = raw["choices"][0]["message"];
    const Json content = message.value("content", Json(""));
    result["output"] = content.is_string() ? content.get<std::string>() : DumpJson(content);
    if (raw.contains("model") && raw["model"].is_string()) result["model"] = raw["model"];
    if (raw.contains("usage") && raw["usage"].is_object()) result["usage"] = raw["usage"];
    result["success"] = true;
  }
  return FromResult(std::move(result));
}

Result<GraphNodeOutcome> RunHuman(const GraphNode& node, const GraphExecEnv& env) {
  if (!env.ask_human) {
    return FailedPreconditionError("node " + node.name + ": human nodes need a runner that can ask");
  }
  Json q = {{"question", Opt(node, "question")}};
  if (node.options.contains("choices")) q["choices"] = node.options["choices"];
  if (node.options.contains("multiSelect")) q["multiSelect"] = node.options["multiSelect"];
  ASSIGN_OR_RETURN(Json answered, env.ask_human(q));
  if (answered.value("status", "") != "answered") {
    // The runner was told not to wait: the run stops here, unanswered.
    GraphNodeOutcome waiting;
    waiting.success = false;
    waiting.error = "waiting for the answer to question " + answered.value("id", "");
    return waiting;
  }
  const Json answer = answered.value("answer", Json::object());
  Json choices = Json::array();
  if (answer.contains("answers") && answer["answers"].is_array() && !answer["answers"].empty()) {
    choices = answer["answers"][0];
  }
  Json result = {{"success", true},
                 {"questionId", answered.value("id", "")},
                 {"answer", choices.size() == 1 ? choices[0] : choices},
                 {"choices", choices},
                 {"text", answer.value("text", "")},
                 {"answeredBy", answered.value("answered_by", Json(nullptr))}};
  GraphNodeOutcome out;
  out.result = std::move(result);
  return out;
}

// The value at "path" (identifiers joined by dots) of "context"; null if any
// step is missing.
const Json* Lookup(const Json& context, std::string_view path) {
  const Json* at = &context;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string step(path.substr(0, dot));
    if (!at->is_object()) return nullptr;
    auto it = at->find(step);
    if (it == at->end()) return nullptr;
    at = &*it;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return at;
}

}  // namespace

std::string RenderGraphTemplate(const std::string& text, const Json& context) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    out.append(text, pos, open - pos);
    std::string_view inner(text.data() + open + 2, close - open - 2);
    while (!inner.empty() && inner.front() == ' ') inner.remove_prefix(1);
    while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
    if (inner.rfind("context.", 0) == 0) {
      const Json* v = Lookup(context, inner.substr(8));
      if (v != nullptr && !v->is_null()) out += v->is_string() ? v->get<std::string>() : DumpJson(*v);
    } else {
      out.append(text, open, close + 2 - open);  // the checks refuse these
    }
    pos = close + 2;
  }
  out.append(text, pos);
  return out;
}

Result<GraphNodeOutcome> ExecuteGraphNode(const GraphNode& node, const Json& state,
                                          const GraphExecEnv& env) {
  const std::string& type = node.type;
  if (type == "command") return RunCommand(node, Opt(node, "command"), env);
  if (type == "dynamic-command") {
    Result<std::string> command = BuildString(node, state);
    if (!command.ok()) {
      return Failed({{"exitCode", -1}, {"stdout", ""}, {"stderr", ""}, {"duration", 0}},
                    std::string(command.status().message()));
    }
    GraphNodeOutcome out = RunCommand(node, *command, env);
    out.result["command"] = *command;
    return out;
  }
  if (type == "http") return RunHttp(node, state);
  if (type == "eval") return RunEval(node, state);
  if (type == "agent") {
    return RunAgent(node, RenderGraphTemplate(Opt(node, "prompt"), state["context"]), env);
  }
  if (type == "dynamic-agent") {
    Result<std::string> prompt = BuildString(node, state);
    if (!prompt.ok()) {
      return Failed({{"output", ""}, {"duration", 0}}, std::string(prompt.status().message()));
    }
    return RunAgent(node, *prompt, env);
  }
  if (type == "llm") return RunLlm(node, state);
  if (type == "slash-command") return RunSlashCommand(node, env);
  if (type == "human") return RunHuman(node, env);
  return FailedPreconditionError("node " + node.name + ": unknown type " + type);
}

Result<std::string> RouteGraphNode(const GraphDef& def, const GraphNode& node, const Json& state) {
  const GraphRouting& then = node.then;
  auto checked = [&](const std::string& target, const std::string& field) -> Result<std::string> {
    if (target == kGraphEnd || target == kGraphError || def.Find(target) != nullptr) return target;
    return FailedPreconditionError("node " + node.name + ": " + field + ": routed to \"" + target +
                                   "\", which is not a node, END or ERROR");
  };
  switch (then.kind) {
    case GraphRouting::Kind::kStatic:
      return checked(then.target, "then");
    case GraphRouting::Kind::kCases:
      for (size_t i = 0; i < then.cases.size(); ++i) {
        const GraphCase& c = then.cases[i];
        const std::string field = "then[" + std::to_string(i) + "]";
        if (!c.when) return checked(c.target, field + ".goto");
        Result<GraphLuaResult> r =
            RunGraphLua("return (" + *c.when + "\n)", node.name + "." + field + ".when", state, false);
        if (!r.ok()) {
          return FailedPreconditionError("node " + node.name + ": " + field +
                                         ".when: " + std::string(r.status().message()));
        }
        if (r->truthy) return checked(c.target, field + ".goto");
      }
      return FailedPreconditionError("node " + node.name + ": then: no case holds and there is no "
                                     "default (a last case without when)");
    case GraphRouting::Kind::kLua: {
      Result<GraphLuaResult> r = RunGraphLua(then.lua, node.name + ".then.lua", state, false);
      if (!r.ok()) {
        return FailedPreconditionError("node " + node.name + ": then.lua: " +
                                       std::string(r.status().message()));
      }
      if (!r->value.is_string()) {
        return FailedPreconditionError("node " + node.name + ": then.lua: must return a node's "
                                       "name, END or ERROR, not " +
                                       std::string(r->value.type_name()));
      }
      return checked(r->value.get<std::string>(), "then.lua");
    }
    case GraphRouting::Kind::kNone:
      break;
  }
  return FailedPreconditionError("node " + node.name + ": then: no routing");
}

}  // namespace baton
