// File: session.h
//
// The protocol core, shared by the stdio and the HTTP transports.
//
// McpServer holds what every client shares: the Api, the tool catalogue,
// the change feed and the options. McpSession is one client's protocol
// state — a stdio connection, a 2025 HTTP session, or (2026-07-28, which
// is stateless) a single request — and answers one JSON-RPC message at a
// time through Handle. Handle may be called from several threads at once
// (a blocked ask_user_question must not hold up a ping); everything it
// shares is guarded.
//
// Every method ends in Api::Call: a tool is an operation, a resource a read
// operation, and the caller's identity is the session's Actor. Refused
// operations are tool results with isError (code, message, details such as
// the allowed next states); protocol mistakes are JSON-RPC errors. See
// docs/mcp.md.

#ifndef BATON_SRC_MCP_SESSION_H_
#define BATON_SRC_MCP_SESSION_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mcp/change_feed.h"
#include "mcp/protocol.h"
#include "mcp/tools.h"
#include "util/mutex.h"

namespace baton::mcp {

struct McpOptions {
  std::vector<std::string> tool_sets = {"baton"};
  // The run seed tool sets act on ("": the newest one that is not done).
  std::string run;
  // Tools per tools/list page; 0: the whole catalogue in one page. Agent
  // hosts (Claude Code, Codex, Copilot CLI) read only the first page, so
  // paging hid task_claim and run_create from them.
  int page_size = 0;
  int64_t progress_interval_ms = 5000;  // progress while a call waits
  size_t max_message_bytes = 4 << 20;   // larger messages are refused
};

class McpServer {
 public:
  static Result<std::unique_ptr<McpServer>> Create(Api& api, McpOptions options);

  Api& api() { return api_; }
  const ToolCatalog& tools() const { return *tools_; }
  ChangeFeed& feed() { return feed_; }
  const McpOptions& options() const { return options_; }

 private:
  McpServer(Api& api, McpOptions options) : api_(api), options_(std::move(options)), feed_(api) {}

  Api& api_;
  McpOptions options_;
  std::unique_ptr<ToolCatalog> tools_;
  ChangeFeed feed_;
};

// What one incoming request may use while it runs.
struct RequestIo {
  // Sends a notification about this request (progress, log messages): on
  // stdio to stdout, over HTTP on the request's SSE stream. May be empty.
  std::function<void(const Json&)> send;
  // Set when the client cancels the request or goes away: long waits end.
  std::atomic<bool> cancelled{false};
  // Set by the client's notifications/cancelled: no response is due.
  std::atomic<bool> withdrawn{false};
  // Called between the slices of a long wait when no progress is asked
  // for: the HTTP transport writes an SSE comment, which is how it finds a
  // client that went away. May be empty.
  std::function<void()> keepalive;
};

class McpSession {
 public:
  // "outbox" sends notifications that belong to no request (resource
  // updates, tools/list_changed): stdout, or the HTTP GET stream. May be
  // empty (a 2026 request carries no session).
  McpSession(McpServer& server, Actor actor, std::string run,
             std::function<void(const Json&)> outbox);
  ~McpSession();
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  // Answers one message. Returns the response, or null for notifications,
  // responses, and requests the client cancelled (no response is due).
  Json Handle(const Json& message, RequestIo& io) EXCLUDES(mu_);
  // At most this many messages in a 2025-03-26 batch: each answer is held
  // until the last (a small request could otherwise ask for gigabytes).
  static constexpr size_t kMaxBatch = 64;

  // The client went away: long waits in flight, and in requests still to
  // come, end at once (their questions stay open).
  void CancelAll() EXCLUDES(mu_);

  const Actor& actor() const { return actor_; }
  // The version initialize negotiated ("" before it, and for 2026 requests).
  std::string legacy_version() const EXCLUDES(mu_);

 private:
  Json HandleBatch(const Json& batch, RequestIo& io);
  Result<Json> Dispatch(const Message& m, const std::string& version, RequestIo& io);
  Result<Json> Initialize(const Json& params) EXCLUDES(mu_);
  Result<Json> ListTools(const Json& params) EXCLUDES(mu_);
  Result<Json> CallTool(const Json& params, RequestIo& io);
  Result<Json> Subscribe(const Json& params, bool subscribe) EXCLUDES(mu_);
  Result<Json> SetLevel(const Json& params) EXCLUDES(mu_);
  Result<Json> Listen(const Json& id, const Json& params, RequestIo& io);
  Json Discover() const;
  Json Capabilities(bool modern) const;
  // Starts listening to the change feed if not yet.
  void EnsureListening() EXCLUDES(mu_);
  void OnEvent(const Json& event) EXCLUDES(mu_);
  std::vector<std::string> VisibleToolNames();
  void Log(RequestIo& io, const std::string& level, const Json& data) EXCLUDES(mu_);

  // What one listener wants to hear of: a 2025 session's subscriptions, or
  // one 2026 subscriptions/listen.
  struct Interest {
    std::set<std::string> uris;
    bool resources_list = false;
    bool tools_list = false;
    std::vector<std::string> listed;  // the tool names the client last saw
  };
  // The notifications "event" means for "interest" (updates its "listed").
  std::vector<Json> Fanout(const Json& event, Interest& interest);

  McpServer& server_;
  const Actor actor_;
  const std::string run_;
  std::function<void(const Json&)> outbox_;

  mutable Mutex mu_;  // guards the fields below
  std::string version_ GUARDED_BY(mu_);
  bool initialized_ GUARDED_BY(mu_) = false;
  std::string log_level_ GUARDED_BY(mu_);  // "": no log messages
  std::set<std::string> subscriptions_ GUARDED_BY(mu_);
  std::vector<std::string> listed_tools_ GUARDED_BY(mu_);  // the last tools/list
  bool tools_listed_ GUARDED_BY(mu_) = false;
  std::map<std::string, RequestIo*> in_flight_ GUARDED_BY(mu_);  // by id.dump()
  // Cancellations that arrived before their request started (stdio runs
  // requests on workers); bounded.
  std::set<std::string> early_cancels_ GUARDED_BY(mu_);
  int listener_ GUARDED_BY(mu_) = 0;  // 0: not listening
  bool closed_ GUARDED_BY(mu_) = false;  // CancelAll was called
};

// The result of a tools/call for "result" of "tool" (content text and
// structuredContent) or for a refusal (isError, the code, message and
// details, text naming the allowed next states of a refused transition).
Json ToolResult(const Tool& tool, const Result<Json>& result);

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_SESSION_H_
