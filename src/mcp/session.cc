#include "mcp/session.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

#include "baton/error_table.h"
#include "mcp/protocol.h"
#include "mcp/resources.h"
#include "model/json_schema.h"

namespace baton::mcp {
namespace {

constexpr const char* kLevels[] = {"debug",    "info",  "notice", "warning",
                                   "error",    "critical", "alert", "emergency"};
constexpr char kCursorPrefix[] = "tools:";
constexpr size_t kMaxSubscriptions = 1000;        // per session or listen
constexpr size_t kMaxUriBytes = 512;
constexpr size_t kMaxQueuedNotifications = 1000;  // per listen stream
constexpr size_t kMaxEarlyCancels = 1000;

Status CheckSubscribableUri(const std::string& uri) {
  if (uri.size() > kMaxUriBytes) {
    return InvalidArgumentError("uri: longer than " + std::to_string(kMaxUriBytes) + " bytes");
  }
  return CheckResourceUri(uri);
}

int LevelRank(const std::string& level) {
  for (int i = 0; i < 8; ++i) {
    if (level == kLevels[i]) return i;
  }
  return -1;
}

// A protocol error: becomes a JSON-RPC error with "code", not a tool result.
Status RpcError(int code, std::string message, Json data = nullptr) {
  return Status(StatusCode::kInvalidArgument, std::move(message),
                Json{{"rpc_code", code}, {"rpc_data", std::move(data)}});
}

Json ErrorFor(const Json& id, const Status& s) {
  const Json& d = s.details();
  if (d.is_object() && d.contains("rpc_code")) {
    return ErrorResponse(id, d["rpc_code"].get<int>(), s.message(), d["rpc_data"]);
  }
  return ErrorResponse(id, MappingFor(s.code()).jsonrpc_code, s.message(), s.ToJson());
}

const Json& Meta(const Json& params) {
  static const Json* const kNone = new Json(Json::object());
  if (!params.is_object()) return *kNone;
  auto it = params.find("_meta");
  return it != params.end() && it->is_object() ? *it : *kNone;
}

// The caching fields 2026-07-28 requires on list and read results.
void Cacheable(Json& result, int64_t ttl_ms, const char* scope) {
  result["ttlMs"] = ttl_ms;
  result["cacheScope"] = scope;
}

const char* kInstructions =
    "baton keeps the durable state of a team of coding agents: runs, tasks and their leases, "
    "agents, mail, questions to the human, and one hash-chained ledger. Each tool is one "
    "operation (group_verb). A refused call returns isError with the reason and, for a status "
    "change, the allowed next states. Calls that change state take idempotency_key: a retry "
    "with the same key acts once.";

}  // namespace

Result<std::unique_ptr<McpServer>> McpServer::Create(Api& api, McpOptions options) {
  std::unique_ptr<McpServer> server(new McpServer(api, std::move(options)));
  ASSIGN_OR_RETURN(server->tools_, ToolCatalog::Build(api.registry(), server->options_.tool_sets));
  return server;
}

Json ToolResult(const Tool& tool, const Result<Json>& result) {
  if (result.ok()) {
    const std::string text = tool.text ? tool.text(*result) : DumpJson(*result);
    return Json{{"content", {{{"type", "text"}, {"text", text}}}},
                {"structuredContent", *result},
                {"isError", false}};
  }
  const Status& s = result.status();
  Json error = s.ToJson();
  std::string text = std::string(MappingFor(s.code()).name) + ": " + s.message();
  const Json& details = s.details();
  if (details.is_object() && details.contains("allowed") &&
      text.find("allowed next states") == std::string::npos) {
    text += "\nallowed next states: " + DumpJson(details["allowed"]);
  }
  text += "\n" + std::string(MappingFor(s.code()).advice) + "\n" + DumpJson(Json{{"error", error}});
  // No structuredContent: it would have to match the tool's output schema.
  return Json{{"content", {{{"type", "text"}, {"text", text}}}},
              {"isError", true},
              {"_meta", {{"io.baton/error", error}}}};
}

McpSession::McpSession(McpServer& server, Actor actor, std::string run,
                       std::function<void(const Json&)> outbox)
    : server_(server), actor_(std::move(actor)), run_(std::move(run)), outbox_(std::move(outbox)) {}

McpSession::~McpSession() {
  int listener = 0;
  {
    MutexLock lock(&mu_);
    listener = listener_;
    listener_ = 0;
  }
  if (listener != 0) server_.feed().Remove(listener);
}

void McpSession::CancelAll() {
  MutexLock lock(&mu_);
  closed_ = true;
  for (auto& [id, io] : in_flight_) io->cancelled = true;
}

std::string McpSession::legacy_version() const {
  MutexLock lock(&mu_);
  return version_;
}

Json McpSession::HandleBatch(const Json& batch, RequestIo& io) {
  if (batch.size() > kMaxBatch) {
    return ErrorResponse(nullptr, kInvalidRequest,
                         "Invalid Request: a batch of " + std::to_string(batch.size()) +
                             " messages; at most " + std::to_string(kMaxBatch));
  }
  Json responses = Json::array();
  for (const Json& one : batch) {
    // Each message is a request of its own: its own cancellation and
    // withdrawal, the transport's ways to send and to notice a client gone.
    RequestIo own;
    own.send = io.send;
    own.keepalive = io.keepalive;
    own.cancelled = io.cancelled.load();
    Json response;
    if (one.is_object() && one.value("method", Json()) == "initialize") {
      response = ErrorResponse(one.value("id", Json()), kInvalidRequest,
                               "Invalid Request: initialize may not come in a batch");
    } else {
      response = one.is_array() ? Handle(Json::object(), own) : Handle(one, own);
    }
    if (!response.is_null()) responses.push_back(std::move(response));
  }
  return responses.empty() ? Json() : responses;
}

Json McpSession::Handle(const Json& message, RequestIo& io) {
  // 2025-03-26 must receive batches: each message answered in turn, the
  // responses (not the notifications') in one array.
  if (message.is_array() && !message.empty() && legacy_version() == kVersion20250326) {
    return HandleBatch(message, io);
  }
  Json error;
  Result<Message> parsed = Classify(message, &error);
  if (!parsed.ok()) return error;
  const Message& m = *parsed;
  if (m.kind == MessageKind::kResponse) return nullptr;  // we send no requests
  if (m.kind == MessageKind::kNotification) {
    MutexLock lock(&mu_);
    if (m.method == "notifications/initialized") initialized_ = true;
    if (m.method == "notifications/cancelled" && m.params.is_object()) {
      const std::string id = m.params.value("requestId", Json()).dump();
      auto it = in_flight_.find(id);
      if (it != in_flight_.end()) {
        it->second->withdrawn = true;
        it->second->cancelled = true;
      } else if (early_cancels_.size() < kMaxEarlyCancels) {
        early_cancels_.insert(id);
      }
    }
    return nullptr;
  }

  // Which version this request speaks: its own _meta (2026-07-28), or the
  // one this session's initialize chose.
  const Json& meta = Meta(m.params);
  std::string version;
  if (meta.contains(kMetaProtocolVersion)) {
    const Json& v = meta[kMetaProtocolVersion];
    if (!v.is_string() || v != kVersion20260728) {
      return ErrorResponse(m.id, kUnsupportedVersion,
                           "Unsupported protocol version in params._meta (only 2026-07-28 is "
                           "given per request; 2025 versions are negotiated with initialize)",
                           UnsupportedVersionData(v.is_string() ? v.get<std::string>() : v.dump()));
    }
    version = kVersion20260728;
  } else if (m.method == "server/discover") {
    version = kVersion20260728;
  } else {
    MutexLock lock(&mu_);
    version = version_;
  }
  if (version.empty() && m.method != "initialize" && m.method != "ping") {
    return ErrorResponse(m.id, kInvalidRequest,
                         "Invalid Request: not initialized: send initialize first, or give "
                         "params._meta[\"" + std::string(kMetaProtocolVersion) +
                             "\"] = \"2026-07-28\" with every request");
  }

  const std::string key = m.id.dump();
  {
    MutexLock lock(&mu_);
    if (closed_) io.cancelled = true;
    if (early_cancels_.erase(key) != 0) {
      io.withdrawn = true;
      io.cancelled = true;
    }
    if (!in_flight_.emplace(key, &io).second) {
      return ErrorResponse(m.id, kInvalidRequest,
                           "Invalid Request: id " + key + " is already in use by a request in flight");
    }
  }
  Result<Json> result = InternalError("not run");
  try {
    result = Dispatch(m, version, io);
  } catch (const std::exception& e) {
    // A value of an unexpected type the checks above let through: a defect,
    // answered as one, never a dead server.
    result = InternalError(m.method + ": " + e.what());
  }
  {
    MutexLock lock(&mu_);
    in_flight_.erase(key);
  }
  if (io.withdrawn) return nullptr;  // the client no longer waits for it
  if (!result.ok()) return ErrorFor(m.id, result.status());
  Json out = std::move(result).value();
  if (version == kVersion20260728) {
    out["resultType"] = "complete";
    out["_meta"][kMetaServerInfo] = ServerInfo();
  }
  return ResultResponse(m.id, std::move(out));
}

Result<Json> McpSession::Dispatch(const Message& m, const std::string& version, RequestIo& io) {
  const bool modern = version == kVersion20260728;
  const Json params = m.params.is_object() ? m.params : Json::object();
  const std::string& method = m.method;
  if (method == "initialize") return Initialize(params);
  if (method == "server/discover") return Discover();
  if (method == "tools/list") {
    ASSIGN_OR_RETURN(Json list, ListTools(params));
    if (modern) Cacheable(list, 0, "private");
    return list;
  }
  if (method == "tools/call") return CallTool(params, io);
  if (method == "resources/list" || method == "resources/templates/list" ||
      method == "resources/read") {
    Result<Json> out = InternalError("unreachable");
    if (method == "resources/list") {
      out = ListResources(server_.api(), actor_);
    } else if (method == "resources/templates/list") {
      out = ResourceTemplates();
    } else {
      if (!params.contains("uri") || !params["uri"].is_string()) {
        return RpcError(kInvalidParams, "resources/read: params.uri must be a string");
      }
      const std::string uri = params["uri"].get<std::string>();
      out = ReadResource(server_.api(), actor_, uri);
      if (!out.ok() && out.status().code() == StatusCode::kNotFound) {
        return RpcError(modern ? kInvalidParams : kResourceNotFoundLegacy,
                        "Resource not found: " + out.status().message(), Json{{"uri", uri}});
      }
    }
    if (out.ok() && modern) Cacheable(*out, 0, "private");
    return out;
  }
  if (modern && method == "subscriptions/listen") return Listen(m.id, params, io);
  if (!modern) {
    if (method == "ping") return Json::object();
    if (method == "resources/subscribe") return Subscribe(params, true);
    if (method == "resources/unsubscribe") return Subscribe(params, false);
    if (method == "logging/setLevel") return SetLevel(params);
  }
  return RpcError(kMethodNotFound, "Method not found: " + method +
                                       (modern ? " (not part of protocol version 2026-07-28)" : ""));
}

Json McpSession::Capabilities(bool modern) const {
  Json caps = {{"tools", {{"listChanged", true}}},
               {"resources", {{"subscribe", true}, {"listChanged", true}}}};
  if (!modern) caps["logging"] = Json::object();
  return caps;
}

Result<Json> McpSession::Initialize(const Json& params) {
  const Json requested = params.value("protocolVersion", Json());
  if (!requested.is_string()) {
    return RpcError(kInvalidParams, "initialize: params.protocolVersion must be a string");
  }
  const std::string version = NegotiateLegacyVersion(requested.get<std::string>());
  {
    MutexLock lock(&mu_);
    version_ = version;
  }
  return Json{{"protocolVersion", version},
              {"capabilities", Capabilities(false)},
              {"serverInfo", ServerInfo()},
              {"instructions", kInstructions}};
}

Json McpSession::Discover() const {
  Json versions = Json::array();
  for (std::string_view v : kSupportedVersions) versions.push_back(v);
  Json out = {{"supportedVersions", versions},
              {"capabilities", Capabilities(true)},
              // The final schema has it only in _meta; early clients read it here.
              {"serverInfo", ServerInfo()},
              {"instructions", kInstructions}};
  Cacheable(out, 3600000, "public");
  return out;
}

std::vector<std::string> McpSession::VisibleToolNames() {
  std::vector<std::string> names;
  for (const Tool* t : server_.tools().Visible(server_.api(), actor_, run_)) names.push_back(t->name);
  return names;
}

Result<Json> McpSession::ListTools(const Json& params) {
  size_t offset = 0;
  if (params.contains("cursor")) {
    const Json& c = params["cursor"];
    const std::string text = c.is_string() ? c.get<std::string>() : "";
    char* end = nullptr;
    const std::string prefix = kCursorPrefix;
    if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size()) {
      offset = std::strtoull(text.c_str() + prefix.size(), &end, 10);
    }
    if (end == nullptr || *end != '\0') {
      return RpcError(kInvalidParams, "tools/list: invalid cursor " + c.dump() +
                                          "; pass back the nextCursor of the previous page");
    }
  }
  std::vector<const Tool*> tools = server_.tools().Visible(server_.api(), actor_, run_);
  if (offset > tools.size()) {
    return RpcError(kInvalidParams, "tools/list: cursor is past the end of the list");
  }
  const size_t page = server_.options().page_size > 0
                          ? static_cast<size_t>(server_.options().page_size)
                          : std::max<size_t>(1, tools.size());
  Json list = Json::array();
  for (size_t i = offset; i < tools.size() && i < offset + page; ++i) {
    list.push_back(ToolCatalog::Describe(*tools[i], actor_));
  }
  Json out = {{"tools", list}};
  if (offset + page < tools.size()) out["nextCursor"] = kCursorPrefix + std::to_string(offset + page);
  if (server_.tools().has_gated() && outbox_) {
    std::vector<std::string> names;
    for (const Tool* t : tools) names.push_back(t->name);
    {
      MutexLock lock(&mu_);
      listed_tools_ = std::move(names);
      tools_listed_ = true;
    }
    EnsureListening();
  }
  return out;
}

Result<Json> McpSession::CallTool(const Json& params, RequestIo& io) {
  if (!params.contains("name") || !params["name"].is_string()) {
    return RpcError(kInvalidParams, "tools/call: params.name must be a string");
  }
  const std::string name = params["name"].get<std::string>();
  const Tool* tool = server_.tools().Find(name);
  if (tool == nullptr) {
    return RpcError(kInvalidParams, "Unknown tool: " + name + "; tools/list lists them");
  }
  Json args = params.value("arguments", Json::object());
  if (!args.is_object()) {
    return RpcError(kInvalidParams, "tools/call: params.arguments must be an object");
  }
  const Json& meta = Meta(params);
  const Json token = meta.value("progressToken", Json());
  auto progress_count = std::make_shared<int>(0);
  std::function<void(const std::string&)> progress = [&io, token, progress_count](const std::string& msg) {
    if (token.is_null() || !io.send) {
      if (io.keepalive) io.keepalive();
      return;
    }
    io.send(MakeNotification("notifications/progress", {{"progressToken", token},
                                                         {"progress", ++*progress_count},
                                                         {"message", msg}}));
  };
  std::string key;
  if (meta.contains(kMetaIdempotencyKey) && meta[kMetaIdempotencyKey].is_string()) {
    key = meta[kMetaIdempotencyKey].get<std::string>();
  }
  Result<Json> result = [&]() -> Result<Json> {
    if (!OfferedTo(*tool, actor_)) {
      std::string roles;
      for (const std::string& r : tool->roles) roles += (roles.empty() ? "" : ", ") + r;
      return PermissionDeniedError("tool " + name + " is for role " + roles + " (caller " +
                                   actor_.id + " has role " + actor_.role + ")");
    }
    if (tool->available && !tool->available(server_.api(), actor_, run_)) {
      return FailedPreconditionError("tool " + name +
                                     " is not available now: the workflow runs without human "
                                     "interaction (interaction mode)");
    }
    if (tool->validate_arguments) {
      Status valid = ValidateJson(tool->input_schema, args);
      if (!valid.ok()) return Status(valid.code(), name + ": invalid arguments: " + valid.message(), valid.details());
    }
    ToolCall call{actor_, args, key, run_, progress, &io.cancelled,
                  server_.options().progress_interval_ms};
    return tool->call(server_.api(), call);
  }();
  if (!result.ok()) {
    Log(io, "warning", {{"tool", name}, {"error", result.status().ToJson()}});
  }
  return ToolResult(*tool, result);
}

Result<Json> McpSession::Subscribe(const Json& params, bool subscribe) {
  if (!params.contains("uri") || !params["uri"].is_string()) {
    return RpcError(kInvalidParams, "resources/subscribe: params.uri must be a string");
  }
  const std::string uri = params["uri"].get<std::string>();
  Status valid = CheckSubscribableUri(uri);
  if (!valid.ok()) return RpcError(kInvalidParams, valid.message(), Json{{"uri", uri.substr(0, kMaxUriBytes)}});
  {
    MutexLock lock(&mu_);
    if (subscribe) {
      if (subscriptions_.size() >= kMaxSubscriptions && subscriptions_.count(uri) == 0) {
        return RpcError(kInvalidParams, "resources/subscribe: at most " +
                                            std::to_string(kMaxSubscriptions) +
                                            " subscriptions per session");
      }
      subscriptions_.insert(uri);
    } else {
      subscriptions_.erase(uri);
    }
  }
  if (subscribe) EnsureListening();
  return Json::object();
}

Result<Json> McpSession::SetLevel(const Json& params) {
  const std::string level = params.value("level", Json("")).is_string() ? params.value("level", "") : "";
  if (LevelRank(level) < 0) {
    return RpcError(kInvalidParams, "logging/setLevel: level must be one of debug, info, notice, "
                                    "warning, error, critical, alert, emergency");
  }
  MutexLock lock(&mu_);
  log_level_ = level;
  return Json::object();
}

void McpSession::Log(RequestIo& io, const std::string& level, const Json& data) {
  {
    MutexLock lock(&mu_);
    if (log_level_.empty() || LevelRank(level) < LevelRank(log_level_)) return;
  }
  if (io.send) {
    io.send(MakeNotification("notifications/message",
                             {{"level", level}, {"logger", "baton"}, {"data", data}}));
  }
}

void McpSession::EnsureListening() {
  if (!outbox_) return;
  {
    MutexLock lock(&mu_);
    if (listener_ != 0) return;
    listener_ = -1;  // claimed; set below
  }
  const int id = server_.feed().Add([this](const Json& event) { OnEvent(event); });
  MutexLock lock(&mu_);
  listener_ = id;
}

namespace {

// Events after which a gated tool (sgai's ask tools, by interaction mode)
// may have come or gone.
bool MayChangeTools(const Json& event) {
  const std::string kind = event.value("kind", "");
  return event["run_id"].is_string() &&
         (kind.rfind("question.", 0) == 0 || kind.rfind("sgai.", 0) == 0 || kind.rfind("run.", 0) == 0);
}

}  // namespace

std::vector<Json> McpSession::Fanout(const Json& event, Interest& interest) {
  std::vector<Json> out;
  std::set<std::string> seen;
  for (const std::string& uri : UrisChangedBy(event)) {
    if (interest.uris.count(uri) != 0 && seen.insert(uri).second) {
      out.push_back(MakeNotification("notifications/resources/updated", {{"uri", uri}}));
    }
  }
  if (interest.resources_list && event.value("kind", "") == "run.created") {
    out.push_back(MakeNotification("notifications/resources/list_changed", Json::object()));
  }
  if (interest.tools_list && server_.tools().has_gated() && MayChangeTools(event)) {
    std::vector<std::string> now = VisibleToolNames();
    if (now != interest.listed) {
      interest.listed = std::move(now);
      out.push_back(MakeNotification("notifications/tools/list_changed", Json::object()));
    }
  }
  return out;
}

void McpSession::OnEvent(const Json& event) {
  Interest interest;
  {
    MutexLock lock(&mu_);
    interest = Interest{subscriptions_, true, tools_listed_, listed_tools_};
  }
  const std::vector<std::string> before = interest.listed;
  std::vector<Json> notes = Fanout(event, interest);
  if (interest.listed != before) {
    MutexLock lock(&mu_);
    listed_tools_ = interest.listed;
  }
  for (Json& n : notes) outbox_(n);
}

Result<Json> McpSession::Listen(const Json& id, const Json& params, RequestIo& io) {
  const Json filter = params.value("notifications", Json::object());
  if (!filter.is_object()) {
    return RpcError(kInvalidParams, "subscriptions/listen: params.notifications must be an object");
  }
  Json honored = Json::object();
  for (const char* flag : {"toolsListChanged", "resourcesListChanged", "promptsListChanged"}) {
    if (!filter.contains(flag)) continue;
    if (!filter[flag].is_boolean()) {
      return RpcError(kInvalidParams, std::string("subscriptions/listen: notifications.") + flag +
                                          " must be a boolean");
    }
    // baton has no prompts: that one is never honoured.
    if (filter[flag].get<bool>() && std::string(flag) != "promptsListChanged") honored[flag] = true;
  }
  Interest interest;
  if (filter.contains("resourceSubscriptions")) {
    const Json& list = filter["resourceSubscriptions"];
    if (!list.is_array() || list.size() > kMaxSubscriptions) {
      return RpcError(kInvalidParams, "subscriptions/listen: resourceSubscriptions must be an array "
                                      "of at most " + std::to_string(kMaxSubscriptions) + " URIs");
    }
    for (const Json& u : list) {
      Status valid = u.is_string() ? CheckSubscribableUri(u.get<std::string>())
                                   : InvalidArgumentError("resourceSubscriptions: URIs are strings");
      if (!valid.ok()) return RpcError(kInvalidParams, valid.message());
      interest.uris.insert(u.get<std::string>());
    }
    honored["resourceSubscriptions"] = Json(std::vector<std::string>(interest.uris.begin(), interest.uris.end()));
  }
  interest.resources_list = honored.contains("resourcesListChanged");
  interest.tools_list = honored.contains("toolsListChanged");
  if (interest.tools_list) interest.listed = VisibleToolNames();
  if (!io.send) return RpcError(kInvalidRequest, "subscriptions/listen needs a stream to send on");
  const Json sub_meta = {{kMetaSubscriptionId, id}};
  // The feed thread only queues; this request's thread writes, so a client
  // that stops reading holds up no one else. Listening starts before the
  // acknowledgement goes out, so nothing committed right after it is missed.
  // In a struct: GUARDED_BY applies to members, not to local variables.
  struct {
    Mutex mu;
    CondVar cv;
    std::deque<Json> notes GUARDED_BY(mu);
  } queue;
  const int listener = server_.feed().Add([&](const Json& event) {
    std::vector<Json> notes = Fanout(event, interest);
    if (notes.empty()) return;
    MutexLock lock(&queue.mu);
    for (Json& n : notes) {
      if (queue.notes.size() < kMaxQueuedNotifications) queue.notes.push_back(std::move(n));
    }
    queue.cv.Signal();
  });
  io.send(MakeNotification("notifications/subscriptions/acknowledged",
                           {{"_meta", sub_meta}, {"notifications", honored}}));
  // Ends when the client cancels it or goes away (found by the keepalive).
  int64_t quiet_ms = 0;
  while (!io.cancelled) {
    std::deque<Json> batch;
    {
      MutexLock lock(&queue.mu);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (queue.notes.empty()) {
        if (!queue.cv.WaitUntil(&queue.mu, deadline)) break;  // quiet for 100 ms
      }
      batch.swap(queue.notes);
    }
    for (Json& n : batch) {
      n["params"]["_meta"] = sub_meta;
      io.send(n);
    }
    quiet_ms = batch.empty() ? quiet_ms + 100 : 0;
    if (quiet_ms >= 15000 && io.keepalive) {
      io.keepalive();
      quiet_ms = 0;
    }
  }
  server_.feed().Remove(listener);
  return Json{{"_meta", sub_meta}};
}

}  // namespace baton::mcp
