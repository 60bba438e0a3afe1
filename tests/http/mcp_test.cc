// The MCP layer driven in process: the JSON-RPC envelope, the 2025
// handshake and stateless 2026-07-28 requests, the tool catalogue (pages,
// roles, refusals as isError, idempotency), resources and subscriptions,
// logging, sgai's tool set, bearer tokens, the HTTP helpers and endpoint,
// and the stdio transport. Waits for notifications are bounded loops, never
// timing assertions.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "http/server.h"
#include "mcp/http_endpoint.h"
#include "mcp/session.h"
#include "mcp/stdio.h"
#include "test_util.h"

namespace baton {
namespace {

using mcp::McpOptions;
using mcp::McpServer;
using mcp::McpSession;
using mcp::RequestIo;
using testing::Agent;
using testing::Coordinator;
using testing::Eventually;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;

constexpr char kUpdated[] = "notifications/resources/updated";
constexpr char kSgaiGoal[] =
    "---\nflow: |\n  \"coordinator\" -> \"coder\"\n---\n# Goal\nbuild it\n";

Json Rpc(int64_t id, const std::string& method, Json params = nullptr) {
  Json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

// "params" with the _meta of a 2026-07-28 request.
Json Modern(Json params = Json::object(), std::string_view version = mcp::kVersion20260728) {
  params["_meta"][mcp::kMetaProtocolVersion] = version;
  return params;
}

int ErrorCode(const Json& response) {
  return response.contains("error") ? response["error"]["code"].get<int>() : 0;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Notifications sent from other threads (the change feed, a listen call).
class Inbox {
 public:
  std::function<void(const Json&)> Sink() {
    return [this](const Json& n) {
      std::lock_guard<std::mutex> lock(mu_);
      got_.push_back(n);
    };
  }
  int Count(const std::string& method, const std::string& uri = "") {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const Json& m : got_) {
      if (m.value("method", "") != method) continue;
      if (uri.empty() || m.value("params", Json::object()).value("uri", "") == uri) ++n;
    }
    return n;
  }
  bool WaitFor(const std::string& method, const std::string& uri = "", int at_least = 1) {
    return Eventually([&] { return Count(method, uri) >= at_least; });
  }
  std::vector<Json> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return got_;
  }

 private:
  std::mutex mu_;
  std::vector<Json> got_;  // GUARDED_BY(mu_)
};

class McpTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(":memory:"); }

  // A new server with "options", and session_ for "actor" on it.
  void Connect(const Actor& actor, McpOptions options = {}) {
    session_.reset();
    Result<std::unique_ptr<McpServer>> server = McpServer::Create(*api_, std::move(options));
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) std::abort();  // every test needs its server
    server_ = std::move(server).value();
    session_ = NewSession(actor);
  }
  std::unique_ptr<McpSession> NewSession(const Actor& actor) {
    return std::make_unique<McpSession>(*server_, actor, "", outbox_.Sink());
  }
  Json Send(const Json& message, McpSession* session = nullptr) {
    RequestIo io;
    return (session != nullptr ? session : session_.get())->Handle(message, io);
  }
  Json Request(const std::string& method, Json params = nullptr, McpSession* session = nullptr) {
    return Send(Rpc(next_id_++, method, std::move(params)), session);
  }
  Json Initialize(McpSession* session = nullptr) {
    Json r = Request("initialize", {{"protocolVersion", "2025-11-25"}}, session);
    EXPECT_TRUE(r.contains("result")) << r.dump();
    return r["result"];
  }
  // The tools/call result (null when the call was a JSON-RPC error).
  Json CallTool(const std::string& name, Json args, Json meta = nullptr) {
    Json params = Modern({{"name", name}, {"arguments", std::move(args)}});
    if (!meta.is_null()) params["_meta"].update(meta);
    Json r = Request("tools/call", params);
    EXPECT_TRUE(r.contains("result")) << name << ": " << r.dump();
    return r.value("result", Json());
  }
  // Every tool "session" is offered, following nextCursor.
  Json AllTools(McpSession* session = nullptr) {
    Json tools = Json::array();
    Json params = Modern();
    for (int page = 0; page < 1000; ++page) {
      Json r = Request("tools/list", params, session);
      if (!r.contains("result")) {
        ADD_FAILURE() << r.dump();
        break;
      }
      for (const Json& t : r["result"]["tools"]) tools.push_back(t);
      if (!r["result"].contains("nextCursor")) break;
      params["cursor"] = r["result"]["nextCursor"];
    }
    return tools;
  }
  std::string NewRun() {
    return MustCall(*api_, "run.create", {{"profile", "sinfonia"}, {"title", "t"}})["id"];
  }
  void AddProgress(const std::string& run, const std::string& text) {
    MustCall(*api_, "run.add_progress", {{"id", run}, {"description", text}});
  }

  std::unique_ptr<Api> api_;
  Inbox outbox_;
  std::unique_ptr<McpServer> server_;
  std::unique_ptr<McpSession> session_;  // destroyed before the server
  int64_t next_id_ = 1;
};

std::set<std::string> Names(const Json& tools) {
  std::set<std::string> names;
  for (const Json& t : tools) names.insert(t["name"].get<std::string>());
  return names;
}

const Json* FindTool(const Json& tools, const std::string& name) {
  for (const Json& t : tools) {
    if (t["name"] == name) return &t;
  }
  return nullptr;
}

// --- JSON-RPC envelope -----------------------------------------------------

TEST_F(McpTest, MalformedEnvelopesAreInvalidRequests) {
  Connect(Human());
  Initialize();
  const struct {
    const char* name;
    Json message;
    Json id;  // the id the error echoes
  } cases[] = {
      {"number", Json(5), nullptr},
      {"batch", Json::array({Rpc(1, "ping")}), nullptr},
      {"no jsonrpc", {{"id", 1}, {"method", "ping"}}, 1},
      {"jsonrpc 1.0", {{"jsonrpc", "1.0"}, {"id", 1}, {"method", "ping"}}, 1},
      {"float id", {{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}}, nullptr},
      {"object id", {{"jsonrpc", "2.0"}, {"id", {{"a", 1}}}, {"method", "ping"}}, nullptr},
      {"array params",
       {{"jsonrpc", "2.0"}, {"id", "x"}, {"method", "ping"}, {"params", Json::array({1})}},
       "x"},
      {"string params", {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}, {"params", "p"}}, 2},
      {"empty method", {{"jsonrpc", "2.0"}, {"id", 3}, {"method", ""}}, 3},
      {"no method, no result", {{"jsonrpc", "2.0"}, {"id", 4}}, 4},
  };
  for (const auto& c : cases) {
    Json r = Send(c.message);
    EXPECT_EQ(ErrorCode(r), mcp::kInvalidRequest) << c.name << ": " << r.dump();
    EXPECT_EQ(r["id"], c.id) << c.name;
    EXPECT_EQ(r["jsonrpc"], "2.0") << c.name;
  }
}

TEST_F(McpTest, NotificationsAndResponsesGetNoResponse) {
  Connect(Human());
  const Json messages[] = {
      {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
      {{"jsonrpc", "2.0"}, {"method", "notifications/no_such_thing"}},
      {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 9}}}},
      {{"jsonrpc", "2.0"}, {"id", 7}, {"result", Json::object()}},
      {{"jsonrpc", "2.0"}, {"id", 8}, {"error", {{"code", -1}, {"message", "m"}}}},
  };
  for (const Json& m : messages) EXPECT_TRUE(Send(m).is_null()) << m.dump();
}

TEST_F(McpTest, RequestsBeforeInitializeAreRefusedExceptPing) {
  Connect(Human());
  Json r = Request("tools/list");
  EXPECT_EQ(ErrorCode(r), mcp::kInvalidRequest) << r.dump();
  EXPECT_TRUE(Contains(r["error"]["message"], "initialize")) << r.dump();
  EXPECT_EQ(Request("ping")["result"], Json::object());
  EXPECT_EQ(session_->legacy_version(), "");
  Initialize();
  EXPECT_EQ(ErrorCode(Request("no/such_method")), mcp::kMethodNotFound);
  EXPECT_TRUE(Request("tools/list").contains("result"));
}

// --- initialize and 2026-07-28 ---------------------------------------------

TEST_F(McpTest, InitializeNegotiatesALegacyVersion) {
  const struct {
    const char* requested;
    const char* negotiated;
  } cases[] = {{"2025-06-18", "2025-06-18"},
               {"2025-11-25", "2025-11-25"},
               {"2024-11-05", "2025-11-25"},
               {"2026-07-28", "2025-11-25"},
               {"garbage", "2025-11-25"}};
  for (const auto& c : cases) {
    Connect(Human());
    Json r = Request("initialize", {{"protocolVersion", c.requested}});
    EXPECT_EQ(r["result"]["protocolVersion"], c.negotiated) << c.requested << ": " << r.dump();
    EXPECT_EQ(session_->legacy_version(), c.negotiated) << c.requested;
  }
  Connect(Human());
  EXPECT_EQ(ErrorCode(Request("initialize", {{"protocolVersion", 20251125}})), mcp::kInvalidParams);
  EXPECT_EQ(ErrorCode(Request("initialize", Json::object())), mcp::kInvalidParams);
}

TEST_F(McpTest, InitializeAdvertisesCapabilitiesAndServerInfo) {
  Connect(Human());
  Json r = Initialize();
  EXPECT_EQ(r["capabilities"]["tools"]["listChanged"], true) << r.dump();
  EXPECT_EQ(r["capabilities"]["resources"]["subscribe"], true) << r.dump();
  EXPECT_TRUE(r["capabilities"]["logging"].is_object()) << r.dump();
  EXPECT_EQ(r["serverInfo"]["name"], "baton");
  EXPECT_TRUE(r["serverInfo"]["version"].is_string());
  EXPECT_EQ(Request("ping")["result"], Json::object());
}

TEST_F(McpTest, DiscoverListsEveryVersionWithOrWithoutMeta) {
  Connect(Human());
  for (const Json& params : {Json(nullptr), Modern()}) {
    Json r = Request("server/discover", params);
    ASSERT_TRUE(r.contains("result")) << params.dump() << ": " << r.dump();
    const Json& d = r["result"];
    for (std::string_view v : mcp::kSupportedVersions) {
      EXPECT_NE(std::find(d["supportedVersions"].begin(), d["supportedVersions"].end(), Json(v)),
                d["supportedVersions"].end())
          << v << " missing: " << d.dump();
    }
    EXPECT_EQ(d["supportedVersions"].size(), 4u);
    EXPECT_EQ(d["capabilities"]["tools"]["listChanged"], true) << params.dump();
    EXPECT_EQ(d["resultType"], "complete") << params.dump();
    EXPECT_TRUE(d["ttlMs"].is_number_integer()) << params.dump();
    EXPECT_TRUE(d["cacheScope"].is_string()) << params.dump();
    EXPECT_EQ(d["_meta"][mcp::kMetaServerInfo]["name"], "baton") << params.dump();
  }
  EXPECT_EQ(session_->legacy_version(), "") << "discover is no handshake";
}

TEST_F(McpTest, UnsupportedModernVersionNamesTheSupportedOnes) {
  Connect(Human());
  Json r = Request("tools/list", Modern(Json::object(), "1900-01-01"));
  EXPECT_EQ(ErrorCode(r), mcp::kUnsupportedVersion) << r.dump();
  EXPECT_EQ(r["error"]["data"]["requested"], "1900-01-01");
  EXPECT_EQ(r["error"]["data"]["supported"].size(), 4u) << r.dump();
}

TEST_F(McpTest, ModernToolsListNeedsNoHandshakeAndIsCacheable) {
  Connect(Human());
  Json r = Request("tools/list", Modern());
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_FALSE(r["result"]["tools"].empty());
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_TRUE(r["result"]["ttlMs"].is_number_integer());
  EXPECT_EQ(r["result"]["cacheScope"], "private");
  EXPECT_EQ(r["result"]["_meta"][mcp::kMetaServerInfo]["name"], "baton");
}

TEST_F(McpTest, LegacyOnlyMethodsAreNotFoundInTheModernVersion) {
  Connect(Human());
  Initialize();  // even a session that did the handshake: the request's _meta decides
  const std::string run = NewRun();
  const struct {
    const char* method;
    Json params;
  } cases[] = {{"ping", Modern()},
               {"logging/setLevel", Modern({{"level", "info"}})},
               {"resources/subscribe", Modern({{"uri", "baton://runs/" + run}})},
               {"resources/unsubscribe", Modern({{"uri", "baton://runs/" + run}})}};
  for (const auto& c : cases) {
    EXPECT_EQ(ErrorCode(Request(c.method, c.params)), mcp::kMethodNotFound) << c.method;
  }
}

// --- tools/list ------------------------------------------------------------

// Agent hosts read only the first page of tools/list (issue 17): by default
// it is the whole catalogue, without a cursor.
TEST_F(McpTest, TheFirstPageIsTheWholeCatalogueByDefault) {
  Connect(Human(), McpOptions{});
  Json first = Request("tools/list", Modern());
  EXPECT_FALSE(first["result"].contains("nextCursor"));
  std::set<std::string> names;
  for (const Json& t : first["result"]["tools"]) names.insert(t["name"].get<std::string>());
  for (const char* want : {"task_claim", "task_complete", "run_create", "run_set_status"}) {
    EXPECT_EQ(names.count(want), 1u) << want;
  }
  EXPECT_GT(names.size(), 100u);
}

// 2025-03-26 is spoken (issue 17): its sessions receive batches, answered
// as one array; a batch is bounded and may not carry initialize.
TEST_F(McpTest, A20250326SessionAnswersBoundedBatches) {
  Connect(Human());
  Json init = Request("initialize", {{"protocolVersion", "2025-03-26"}});
  ASSERT_EQ(init["result"]["protocolVersion"], "2025-03-26") << init.dump();
  Json both = Send(Json::array({Rpc(7, "ping"), Rpc(8, "tools/list"),
                                {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}}));
  ASSERT_TRUE(both.is_array()) << both.dump();
  ASSERT_EQ(both.size(), 2u) << "a notification gets no response";
  EXPECT_EQ(both[0]["id"], 7);
  EXPECT_TRUE(both[1]["result"].contains("tools"));
  Json again = Send(Json::array({Rpc(9, "initialize", {{"protocolVersion", "2025-06-18"}})}));
  EXPECT_EQ(ErrorCode(again[0]), mcp::kInvalidRequest) << again.dump();
  EXPECT_EQ(session_->legacy_version(), "2025-03-26");
  Json many = Json::array();
  for (size_t i = 0; i <= McpSession::kMaxBatch; ++i) many.push_back(Rpc(100 + i, "ping"));
  EXPECT_EQ(ErrorCode(Send(many)), mcp::kInvalidRequest);
}

// Each role is offered the tools of its work by default (issue 17); "all"
// lists every operation the role may call.
TEST_F(McpTest, EachRoleIsOfferedItsOwnWorkAndAllListsEverything) {
  auto names = [&](const Actor& who, std::vector<std::string> sets) {
    McpOptions options;
    options.tool_sets = std::move(sets);
    Connect(who, options);
    std::set<std::string> out;
    const Json r = Request("tools/list", Modern());
    EXPECT_TRUE(r.contains("result")) << r.dump();
    for (const Json& t : r.value("result", Json::object()).value("tools", Json::array())) {
      out.insert(t["name"].get<std::string>());
    }
    return out;
  };
  const std::set<std::string> agent = names(Agent(), {"baton"});
  for (const char* want : {"task_claim", "task_heartbeat", "task_complete", "task_fail",
                           "run_add_progress", "mail_send", "mail_inbox", "question_ask"}) {
    EXPECT_EQ(agent.count(want), 1u) << want;
  }
  for (const char* not_its_work : {"run_create", "board_create", "graph_fork", "wish_lint"}) {
    EXPECT_EQ(agent.count(not_its_work), 0u) << not_its_work;
  }
  EXPECT_LE(agent.size(), 25u);
  const std::set<std::string> coordinator = names(Coordinator(), {"baton"});
  for (const char* want : {"task_claim", "run_create", "run_set_status", "task_create",
                           "task_add_dependency", "question_list"}) {
    EXPECT_EQ(coordinator.count(want), 1u) << want;
  }
  EXPECT_LE(coordinator.size(), 50u);
  const std::set<std::string> all = names(Agent(), {"all"});
  EXPECT_GT(all.size(), 90u);  // every operation an agent may call
  EXPECT_EQ(all.count("wish_lint"), 1u);
  EXPECT_EQ(names(Agent(), {"baton", "all"}), all) << "all wins over baton";
  // A tool not listed may still be called by name, under the role's rules.
  Connect(Agent(), McpOptions{});
  Json lint = Request("tools/call", Modern({{"name", "wish_lint"},
                                            {"arguments", {{"text", "# Wish: x\n"}}}}));
  EXPECT_TRUE(lint.contains("result")) << lint.dump();
}

TEST_F(McpTest, PagesCoverEveryToolExactlyOnce) {
  McpOptions big;
  big.page_size = 100000;
  Connect(Human(), big);
  const Json one_page = AllTools();
  McpOptions small;
  small.page_size = 10;
  Connect(Human(), small);
  Json first = Request("tools/list", Modern());
  EXPECT_EQ(first["result"]["tools"].size(), 10u);
  EXPECT_TRUE(first["result"]["nextCursor"].is_string()) << "more than one page expected";
  const Json paged = AllTools();
  ASSERT_GT(one_page.size(), 10u);
  EXPECT_EQ(paged.size(), one_page.size()) << "a tool was listed twice or not at all";
  EXPECT_EQ(Names(paged), Names(one_page));
  EXPECT_EQ(Names(paged).size(), paged.size()) << "duplicate names";
}

TEST_F(McpTest, InvalidCursorIsInvalidParams) {
  Connect(Human());
  for (const Json& cursor : {Json("bogus"), Json("tools:"), Json("tools:1x"), Json(5),
                             Json("tools:99999"), Json(nullptr)}) {
    Json r = Request("tools/list", Modern({{"cursor", cursor}}));
    EXPECT_EQ(ErrorCode(r), mcp::kInvalidParams) << cursor.dump() << ": " << r.dump();
  }
}

TEST_F(McpTest, EveryToolDeclaresObjectSchemas) {
  McpOptions options;
  options.tool_sets = {"baton", "sgai", "genie"};
  options.page_size = 100000;
  Connect(SystemActor(), options);
  const Json tools = AllTools();
  ASSERT_GT(tools.size(), 20u);
  for (const Json& t : tools) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    if (t.contains("outputSchema")) {
      EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
    }
    EXPECT_TRUE(t["description"].is_string() && !t["description"].empty()) << t["name"];
  }
}

TEST_F(McpTest, UnknownOrEmptyToolSetsAreRefusedAtStartUp) {
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"nope"}, std::vector<std::string>{}}) {
    McpOptions options;
    options.tool_sets = sets;
    Result<std::unique_ptr<McpServer>> server = McpServer::Create(*api_, options);
    ASSERT_FALSE(server.ok()) << sets.size();
    EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(McpTest, ToolsAreOfferedByRole) {
  McpOptions options;
  options.page_size = 100000;
  Connect(Human(), options);
  const struct {
    Actor actor;
    const char* tool;
    bool offered;
  } cases[] = {
      {Agent(), "sgai_apply_workflow_state", false},
      {Agent(), "token_resolve", false},
      {Agent(), "token_create", false},
      {Agent(), "run_add_progress", true},
      {Human(), "token_create", true},
      {Human(), "token_resolve", false},
      {Coordinator(), "run_create", true},
      {Agent(), "run_create", false},
      {SystemActor(), "sgai_apply_workflow_state", true},
      {SystemActor(), "token_resolve", true},
  };
  for (const auto& c : cases) {
    std::unique_ptr<McpSession> session = NewSession(c.actor);
    const bool listed = Names(AllTools(session.get())).count(c.tool) != 0;
    EXPECT_EQ(listed, c.offered) << c.tool << " for role " << c.actor.role;
  }
}

// --- tools/call ------------------------------------------------------------

TEST_F(McpTest, ToolCallMistakesAreJsonRpcErrors) {
  Connect(Human());
  const Json cases[] = {
      Modern({{"name", "no_such_tool"}, {"arguments", Json::object()}}),
      Modern({{"arguments", Json::object()}}),
      Modern({{"name", 5}}),
      Modern({{"name", "run_list"}, {"arguments", "x"}}),
      Modern({{"name", "run_list"}, {"arguments", {1, 2}}}),
  };
  for (const Json& params : cases) {
    Json r = Request("tools/call", params);
    EXPECT_EQ(ErrorCode(r), mcp::kInvalidParams) << params.dump() << ": " << r.dump();
  }
}

TEST_F(McpTest, SuccessfulCallCarriesTextAndStructuredContent) {
  Connect(Human());
  Json r = CallTool("run_create", {{"profile", "sinfonia"}, {"title", "mcp"}});
  EXPECT_EQ(r["isError"], false) << r.dump();
  ASSERT_EQ(r["content"].size(), 1u) << r.dump();
  EXPECT_EQ(r["content"][0]["type"], "text");
  Result<Json> text = ParseJson(r["content"][0]["text"].get<std::string>(), "text");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, r["structuredContent"]);
  EXPECT_EQ(r["structuredContent"]["title"], "mcp");
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", r["structuredContent"]["id"]}})["status"],
            "created");
  // Arguments may be left out: run_list takes none.
  Json list = Request("tools/call", Modern({{"name", "run_list"}}));
  EXPECT_EQ(list["result"]["structuredContent"]["runs"].size(), 1u) << list.dump();
}

TEST_F(McpTest, IllegalTransitionIsAToolErrorNamingAllowedStates) {
  Connect(Human());
  const std::string run = NewRun();
  const int64_t before = LedgerLength(*api_);
  Json r = CallTool("run_set_status", {{"id", run}, {"status", "complete"}});
  EXPECT_EQ(r["isError"], true) << r.dump();
  EXPECT_FALSE(r.contains("structuredContent"));
  const std::string text = r["content"][0]["text"];
  EXPECT_TRUE(Contains(text, "FailedPrecondition")) << text;
  EXPECT_TRUE(Contains(text, "allowed next states")) << text;
  for (const char* next : {"in-progress", "blocked", "failed"}) {
    EXPECT_TRUE(Contains(text, next)) << next << " not named: " << text;
  }
  EXPECT_EQ(r["_meta"]["io.baton/error"]["code"], "FailedPrecondition") << r.dump();
  EXPECT_EQ(LedgerLength(*api_), before);
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", run}})["status"], "created");
}

TEST_F(McpTest, BadInputIsAToolErrorNamingTheField) {
  Connect(Agent());
  const std::string run = NewRun();
  const int64_t before = LedgerLength(*api_);
  const struct {
    const char* tool;
    Json args;
    const char* field;  // the text names it
    const char* code;
  } cases[] = {
      {"run_set_status", {{"id", run}}, "status", "InvalidArgument"},
      {"run_add_progress", {{"id", run}, {"description", 5}}, "description", "InvalidArgument"},
      {"run_add_progress",
       {{"id", run}, {"description", "x"}, {"colour", 1}},
       "colour",
       "InvalidArgument"},
      {"run_add_progress", {{"id", "run-none"}, {"description", "x"}}, "run-none", "NotFound"},
      {"token_create",
       {{"holder", "a"}, {"holder_role", "agent"}},
       "token_create",
       "PermissionDenied"},
  };
  for (const auto& c : cases) {
    Json r = CallTool(c.tool, c.args);
    EXPECT_EQ(r["isError"], true) << c.tool << " " << c.args.dump() << ": " << r.dump();
    const std::string text = r["content"][0].value("text", "");
    EXPECT_TRUE(Contains(text, c.field))
        << c.args.dump() << " should name " << c.field << ": " << text;
    EXPECT_EQ(r["_meta"]["io.baton/error"]["code"], c.code) << c.args.dump();
  }
  EXPECT_EQ(LedgerLength(*api_), before) << "a refused call changes nothing";
}

TEST_F(McpTest, IdempotencyKeyActsOnce) {
  Connect(Human());
  const std::string run = NewRun();
  const struct {
    const char* how;
    Json args;
    Json meta;
  } cases[] = {
      {"_meta key", {{"id", run}, {"description", "once"}}, {{mcp::kMetaIdempotencyKey, "k-1"}}},
      {"argument key",
       {{"id", run}, {"description", "twice"}, {"idempotency_key", "k-2"}},
       nullptr},
  };
  for (const auto& c : cases) {
    const int64_t before = LedgerLength(*api_);
    Json first = CallTool("run_add_progress", c.args, c.meta);
    const int64_t after = LedgerLength(*api_);
    Json second = CallTool("run_add_progress", c.args, c.meta);
    EXPECT_EQ(first["isError"], false) << c.how << ": " << first.dump();
    EXPECT_GT(after, before) << c.how;
    EXPECT_EQ(LedgerLength(*api_), after) << c.how << ": the retry acted again";
    EXPECT_EQ(second["structuredContent"], first["structuredContent"]) << c.how;
  }
  const int64_t before = LedgerLength(*api_);
  CallTool("run_add_progress", {{"id", run}, {"description", "once"}},
           {{mcp::kMetaIdempotencyKey, "k-3"}});
  EXPECT_GT(LedgerLength(*api_), before) << "a new key is a new request";
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", run}})["progress"].size(), 3u);
}

// --- resources -------------------------------------------------------------

TEST_F(McpTest, ResourcesListAndTemplatesNameTheShapes) {
  Connect(Human());
  Initialize();
  const std::string run = NewRun();
  const Json listed_templates = Request("resources/templates/list");
  std::set<std::string> templates;
  for (const Json& t : listed_templates["result"]["resourceTemplates"]) {
    templates.insert(t["uriTemplate"].get<std::string>());
  }
  for (const char* shape :
       {"baton://runs/{id}", "baton://runs/{id}/tasks", "baton://runs/{id}/ledger",
        "baton://runs/{id}/questions", "baton://tasks/{id}"}) {
    EXPECT_EQ(templates.count(shape), 1u) << shape;
  }
  const Json listed = Request("resources/list");
  std::set<std::string> uris;
  for (const Json& r : listed["result"]["resources"]) uris.insert(r["uri"].get<std::string>());
  for (const std::string& uri :
       {std::string("baton://runs"), std::string("baton://questions"), "baton://runs/" + run}) {
    EXPECT_EQ(uris.count(uri), 1u) << uri;
  }
}

TEST_F(McpTest, ReadReturnsTheOperationsResultAsJsonText) {
  Connect(Human());
  Initialize();
  const std::string run = NewRun();
  const struct {
    std::string uri;
    const char* key;  // a member of the parsed text
  } cases[] = {{"baton://runs/" + run, "id"},
               {"baton://runs", "runs"},
               {"baton://runs/" + run + "/tasks", "tasks"},
               {"baton://runs/" + run + "/ledger", "events"},
               {"baton://runs/" + run + "/questions", "questions"}};
  for (const auto& c : cases) {
    Json r = Request("resources/read", {{"uri", c.uri}});
    ASSERT_TRUE(r.contains("result")) << c.uri << ": " << r.dump();
    const Json& content = r["result"]["contents"][0];
    EXPECT_EQ(content["uri"], c.uri);
    EXPECT_EQ(content["mimeType"], "application/json") << c.uri;
    Result<Json> parsed = ParseJson(content["text"].get<std::string>(), c.uri);
    ASSERT_TRUE(parsed.ok()) << c.uri;
    EXPECT_TRUE(parsed->contains(c.key)) << c.uri << ": " << content["text"];
  }
  const Json read = Request("resources/read", {{"uri", "baton://runs/" + run}});
  Result<Json> shown = ParseJson(read["result"]["contents"][0].value("text", ""), "run");
  ASSERT_TRUE(shown.ok()) << read.dump();
  EXPECT_EQ((*shown)["id"], run);
  EXPECT_EQ((*shown)["status"], "created");
}

TEST_F(McpTest, ReadOfNothingIsResourceNotFoundWithTheUri) {
  Connect(Human());
  Initialize();
  for (const char* uri : {"baton://nope", "http://x/runs", "baton://runs/a/b/c",
                          "baton://runs//tasks", "baton://runs/run-missing"}) {
    Json legacy = Request("resources/read", {{"uri", uri}});
    EXPECT_EQ(ErrorCode(legacy), mcp::kResourceNotFoundLegacy) << uri << ": " << legacy.dump();
    EXPECT_EQ(legacy["error"]["data"]["uri"], uri);
    Json modern = Request("resources/read", Modern({{"uri", uri}}));
    EXPECT_EQ(ErrorCode(modern), mcp::kInvalidParams) << uri << ": " << modern.dump();
    EXPECT_EQ(modern["error"]["data"]["uri"], uri);
  }
  EXPECT_EQ(ErrorCode(Request("resources/read", {{"uri", 5}})), mcp::kInvalidParams);
}

TEST_F(McpTest, SubscriberHearsOfChangesUntilItUnsubscribes) {
  Connect(Human());
  Initialize();
  const std::string a = NewRun(), b = NewRun();
  const std::string uri_a = "baton://runs/" + a, uri_b = "baton://runs/" + b;
  ASSERT_EQ(Request("resources/subscribe", {{"uri", uri_a}})["result"], Json::object());
  AddProgress(a, "one");
  ASSERT_TRUE(outbox_.WaitFor(kUpdated, uri_a)) << "no notification for " << uri_a;
  EXPECT_EQ(Request("resources/unsubscribe", {{"uri", uri_a}})["result"], Json::object());
  ASSERT_EQ(Request("resources/subscribe", {{"uri", uri_b}})["result"], Json::object());
  // Events reach a session in ledger order, so b's notification is a fence.
  AddProgress(b, "fence");
  ASSERT_TRUE(outbox_.WaitFor(kUpdated, uri_b, 1));
  const int heard = outbox_.Count(kUpdated, uri_a);
  AddProgress(a, "two");
  AddProgress(b, "fence again");
  ASSERT_TRUE(outbox_.WaitFor(kUpdated, uri_b, 2));
  EXPECT_EQ(outbox_.Count(kUpdated, uri_a), heard) << "notified after unsubscribing";
}

TEST_F(McpTest, SubscribeRefusesABadUri) {
  Connect(Human());
  Initialize();
  for (const Json& uri : {Json("baton://nope"), Json("file:///etc/passwd"), Json(7)}) {
    Json r = Request("resources/subscribe", {{"uri", uri}});
    EXPECT_EQ(ErrorCode(r), mcp::kInvalidParams) << uri.dump() << ": " << r.dump();
  }
}

// Regression: resources/list listed every run, finished ones included, and
// run.list's oldest-first order with a limit kept the oldest, not the live.
TEST_F(McpTest, FinishedRunsAreNotListedAsResources) {
  Connect(Human());
  Initialize();
  const std::string done = NewRun(), live = NewRun();
  MustCall(*api_, "run.set_status", {{"id", done}, {"status", "in-progress"}});
  MustCall(*api_, "run.set_status", {{"id", done}, {"status", "complete"}});
  const Json listed = Request("resources/list");
  std::set<std::string> uris;
  for (const Json& r : listed["result"]["resources"]) uris.insert(r["uri"].get<std::string>());
  EXPECT_EQ(uris.count("baton://runs/" + live), 1u);
  EXPECT_EQ(uris.count("baton://runs/" + done), 0u) << "a complete run is listed";
}

// Regression: while the change feed had no listener it never advanced, so a
// later listener was replayed every event committed in between.
TEST_F(McpTest, LateSubscriberHearsOnlyLaterChanges) {
  Connect(Human());
  Initialize();
  const std::string a = NewRun(), b = NewRun();
  ASSERT_EQ(Request("resources/subscribe", {{"uri", "baton://runs/" + b}})["result"],
            Json::object());  // starts the feed
  session_.reset();           // and leaves it without listeners
  AddProgress(a, "before anyone listens");
  std::unique_ptr<McpSession> late = NewSession(Human());
  Initialize(late.get());
  for (const std::string& run : {a, b}) {
    Request("resources/subscribe", {{"uri", "baton://runs/" + run}}, late.get());
  }
  AddProgress(b, "fence");
  ASSERT_TRUE(outbox_.WaitFor(kUpdated, "baton://runs/" + b));
  EXPECT_EQ(outbox_.Count(kUpdated, "baton://runs/" + a), 0) << "heard of an earlier change";
}

// --- 2026-07-28 subscriptions/listen ---------------------------------------

class ListenTest : public McpTest {
 protected:
  // Runs subscriptions/listen for "uris" on a thread, as one stateless
  // request; "on_send" sees each notification before it is kept.
  void StartListening(const std::vector<std::string>& uris,
                      std::function<void(const Json&)> on_send = nullptr) {
    Connect(Human());
    session_ = std::make_unique<McpSession>(*server_, Human(), "", nullptr);
    io_.send = [this, on_send, sink = inbox_.Sink()](const Json& n) {
      if (on_send) on_send(n);
      sink(n);
    };
    const Json params = Modern({{"notifications", {{"resourceSubscriptions", uris}}}});
    thread_ = std::thread([this, params] {
      response_ = session_->Handle(Rpc(7, "subscriptions/listen", params), io_);
    });
  }
  Json StopListening() {
    io_.cancelled = true;
    if (thread_.joinable()) thread_.join();
    return response_;
  }
  void TearDown() override { StopListening(); }

  RequestIo io_;
  Inbox inbox_;
  std::thread thread_;
  Json response_;
};

TEST_F(ListenTest, StreamsUpdatesUntilCancelled) {
  const std::string run = NewRun();
  const std::string uri = "baton://runs/" + run;
  StartListening({uri});
  ASSERT_TRUE(inbox_.WaitFor("notifications/subscriptions/acknowledged"));
  // The listener may start just after the acknowledgement: change until heard.
  ASSERT_TRUE(Eventually([&] {
    AddProgress(run, "tick");
    return inbox_.Count(kUpdated, uri) > 0;
  }));
  for (const Json& n : inbox_.All()) {
    EXPECT_EQ(n["params"]["_meta"][mcp::kMetaSubscriptionId], 7) << n.dump();
  }
  Json r = StopListening();
  EXPECT_EQ(r["result"]["_meta"][mcp::kMetaSubscriptionId], 7) << r.dump();
}

// Regression: subscriptions/listen acknowledged before it listened, so a
// change committed right after the acknowledgement was never notified.
TEST_F(ListenTest, HearsChangesCommittedRightAfterTheAcknowledgement) {
  const std::string a = NewRun(), b = NewRun();
  StartListening({"baton://runs/" + a, "baton://runs/" + b}, [&](const Json& n) {
    if (n["method"] == "notifications/subscriptions/acknowledged") AddProgress(a, "right after");
  });
  ASSERT_TRUE(Eventually([&] {
    AddProgress(b, "fence");
    return inbox_.Count(kUpdated, "baton://runs/" + b) > 0;
  }));
  EXPECT_EQ(inbox_.Count(kUpdated, "baton://runs/" + a), 1);
}

// Regression: a non-boolean listen filter threw nlohmann's type_error, which
// ended a stdio server (worker thread). Now -32602.
TEST_F(McpTest, ListenRefusesNonBooleanFiltersWithoutThrowing) {
  Connect(Human());
  RequestIo io;
  io.send = [](const Json&) {};
  io.cancelled = true;  // were it accepted, end at once
  Json r;
  EXPECT_NO_THROW(
      r = session_->Handle(Rpc(1, "subscriptions/listen",
                               Modern({{"notifications", {{"toolsListChanged", "yes"}}}})),
                           io));
  EXPECT_EQ(ErrorCode(r), mcp::kInvalidParams) << r.dump();
}

// --- logging ---------------------------------------------------------------

TEST_F(McpTest, SetLevelRefusesUnknownLevels) {
  Connect(Human());
  Initialize();
  for (const Json& params :
       {Json{{"level", "verbose"}}, Json{{"level", ""}}, Json{{"level", 3}}, Json::object()}) {
    EXPECT_EQ(ErrorCode(Request("logging/setLevel", params)), mcp::kInvalidParams) << params.dump();
  }
  EXPECT_EQ(Request("logging/setLevel", {{"level", "debug"}})["result"], Json::object());
}

TEST_F(McpTest, RefusedCallIsLoggedAtOrAboveTheLevel) {
  const struct {
    const char* level;  // "": never set
    bool logged;
  } cases[] = {{"", false}, {"debug", true}, {"warning", true}, {"error", false}};
  for (const auto& c : cases) {
    Connect(Human());
    Initialize();
    if (*c.level != '\0') Request("logging/setLevel", {{"level", c.level}});
    std::vector<Json> sent;
    RequestIo io;
    io.send = [&](const Json& n) { sent.push_back(n); };
    Json r = session_->Handle(Rpc(next_id_++, "tools/call",
                                  {{"name", "run_show"}, {"arguments", {{"id", "run-missing"}}}}),
                              io);
    EXPECT_EQ(r["result"]["isError"], true) << c.level;
    ASSERT_EQ(sent.size(), c.logged ? 1u : 0u) << "level " << c.level;
    if (!c.logged) continue;
    EXPECT_EQ(sent[0]["method"], "notifications/message");
    EXPECT_EQ(sent[0]["params"]["level"], "warning");
    EXPECT_EQ(sent[0]["params"]["data"]["tool"], "run_show");
  }
}

// --- sgai tool set ---------------------------------------------------------

class SgaiToolsTest : public McpTest {
 protected:
  void Connect(const Actor& actor) {
    McpOptions options;
    options.tool_sets = {"sgai"};
    McpTest::Connect(actor, options);
  }
  // The workdir is a temporary folder outside the memory store's roots (the
  // current folder): the coordinator that starts the run holds "paths".
  std::string StartRun() {
    return MustCall(*api_, "sgai.start", {{"goal", kSgaiGoal}, {"workdir", dir_.path()}},
                    Actor{"coord", "coordinator", {std::string(kGrantPaths)}})["run"]["id"];
  }
  testing::TempDir dir_;
};

TEST_F(SgaiToolsTest, CompleteIsOfferedOnlyToTheCoordinator) {
  const std::set<std::string> coordinator_only = {"peek_message_bus", "project_todowrite",
                                                  "ask_user_question"};
  for (const Actor& actor : {Agent(), Coordinator()}) {
    Connect(actor);
    const Json tools = AllTools();
    const bool coordinator = actor.role == "coordinator";
    const Json* update = FindTool(tools, "update_workflow_state");
    ASSERT_NE(update, nullptr) << actor.role;
    Json expected =
        coordinator ? Json{"working", "agent-done", "complete"} : Json{"working", "agent-done"};
    EXPECT_EQ((*update)["inputSchema"]["properties"]["status"]["enum"], expected) << actor.role;
    for (const std::string& name : coordinator_only) {
      EXPECT_EQ(FindTool(tools, name) != nullptr, coordinator) << name << " for " << actor.role;
    }
  }
}

TEST_F(SgaiToolsTest, AgentsCompleteIsDowngradedToAgentDone) {
  const std::string run = StartRun();
  Connect(Agent("coder"));
  Json r = CallTool("update_workflow_state",
                    {{"status", "complete"}, {"task", "coding"}, {"addProgress", "done"}});
  ASSERT_EQ(r["isError"], false) << r.dump();
  EXPECT_EQ(r["structuredContent"]["downgraded"], true) << r.dump();
  EXPECT_EQ(r["structuredContent"]["status"], "agent-done");
  EXPECT_TRUE(Contains(r["content"][0]["text"], "agent-done")) << r.dump();
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", run}})["status"], "agent-done");
}

TEST_F(SgaiToolsTest, SendMessageNamesAMissingFieldAndDeliversAValidOne) {
  StartRun();
  MustCall(*api_, "agent.register", {{"id", "coder"}}, Agent("coder"));
  Connect(Coordinator());
  const int64_t before = LedgerLength(*api_);
  Json refused = CallTool("send_message", {{"body", "hi"}});
  EXPECT_EQ(refused["isError"], true) << refused.dump();
  EXPECT_TRUE(Contains(refused["content"][0]["text"], "toAgent")) << refused.dump();
  EXPECT_EQ(LedgerLength(*api_), before);
  Json sent = CallTool("send_message", {{"toAgent", "coder"}, {"body", "fix the build"}});
  EXPECT_EQ(sent["isError"], false) << sent.dump();
  EXPECT_TRUE(Contains(sent["content"][0]["text"], "Message sent successfully to coder"))
      << sent.dump();
  Connect(Agent("coder"));
  Json inbox = CallTool("check_inbox", Json::object());
  EXPECT_TRUE(Contains(inbox["content"][0]["text"], "fix the build")) << inbox.dump();
}

// --- tokens ----------------------------------------------------------------

TEST_F(McpTest, TokenResolvesToItsCallerUntilRevoked) {
  Json made = MustCall(*api_, "token.create", {{"holder", "coder"}, {"holder_role", "agent"}});
  const std::string secret = made["token"];
  EXPECT_EQ(secret.rfind("baton_", 0), 0u) << secret;
  Json other =
      MustCall(*api_, "token.create", {{"holder", "lead"}, {"holder_role", "coordinator"}});
  EXPECT_NE(other["token"], secret);
  EXPECT_EQ(MustCall(*api_, "token.resolve", {{"token", secret}}, SystemActor()),
            (Json{{"agent", "coder"}, {"role", "agent"}, {"grants", Json::array()}}));
  MustCall(*api_, "token.revoke", {{"id", made["id"]}});
  (void)testing::Refused(*api_, "token.resolve", {{"token", secret}}, StatusCode::kUnauthenticated,
                         SystemActor());
  (void)testing::Refused(*api_, "token.resolve", {{"token", "baton_guess"}},
                         StatusCode::kUnauthenticated, SystemActor());
  EXPECT_EQ(MustCall(*api_, "token.resolve", {{"token", other["token"]}}, SystemActor())["agent"],
            "lead");
}

TEST_F(McpTest, TokenListNeverShowsTheSecret) {
  Json made = MustCall(*api_, "token.create", {{"holder", "coder"}, {"holder_role", "agent"}});
  MustCall(*api_, "token.revoke", {{"id", made["id"]}});
  Json kept = MustCall(*api_, "token.create", {{"holder", "lead"}, {"holder_role", "coordinator"}});
  const std::string list = DumpJson(MustCall(*api_, "token.list", Json::object()));
  for (const Json& t : {made, kept}) {
    const std::string secret = t["token"];
    EXPECT_FALSE(Contains(list, secret)) << "secret listed: " << list;
    EXPECT_FALSE(Contains(list, secret.substr(6))) << "secret listed: " << list;
    EXPECT_TRUE(Contains(list, t["id"].get<std::string>())) << list;
  }
}

TEST_F(McpTest, OnlyHumansManageTokens) {
  const struct {
    const char* op;
    Json input;
    Actor actor;
    StatusCode code;
  } cases[] = {
      {"token.create",
       {{"holder", "x"}, {"holder_role", "admin"}},
       Agent(),
       StatusCode::kPermissionDenied},
      {"token.create",
       {{"holder", "x"}, {"holder_role", "agent"}},
       Coordinator(),
       StatusCode::kPermissionDenied},
      {"token.list", Json::object(), Agent(), StatusCode::kPermissionDenied},
      {"token.resolve", {{"token", "baton_x"}}, Human(), StatusCode::kPermissionDenied},
      {"token.create",
       {{"holder", "x"}, {"holder_role", "root"}},
       Human(),
       StatusCode::kInvalidArgument},
      {"token.revoke", {{"id", "tok-none"}}, Human(), StatusCode::kNotFound},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " as " + c.actor.role + " " + c.input.dump());
    (void)testing::Refused(*api_, c.op, c.input, c.code, c.actor);
  }
}

// --- HTTP helpers and endpoint ---------------------------------------------

TEST(McpHttpTest, SgaiIdentityNameIsTheTrimmedFirstField) {
  const std::pair<const char*, const char*> cases[] = {{"coder|gpt|x", "coder"},
                                                       {"  coordinator ", "coordinator"},
                                                       {"|x", ""},
                                                       {"", ""},
                                                       {"\tplanner\t|m", "planner"},
                                                       {"   ", ""}};
  for (const auto& [header, name] : cases) {
    EXPECT_EQ(SgaiIdentityName(header), name) << "\"" << header << "\"";
  }
}

TEST(McpHttpTest, LoopbackOriginsAreRecognised) {
  const std::pair<const char*, bool> cases[] = {{"http://localhost:3000", true},
                                                {"http://127.0.0.1", true},
                                                {"https://[::1]:8", true},
                                                {"http://localhost", true},
                                                {"http://evil.com", false},
                                                {"http://localhost.evil.com", false},
                                                {"null", false},
                                                {"", false},
                                                {"ftp://localhost", false},
                                                {"http://evil.com:127", false}};
  for (const auto& [origin, loopback] : cases) {
    EXPECT_EQ(mcp::IsLoopbackOrigin(origin), loopback) << "\"" << origin << "\"";
  }
}

// Regression: any host starting with "127." passed the DNS-rebinding check,
// so a page on http://127.0.0.1.evil.com (a name its owner points anywhere)
// was let in.
TEST(McpHttpTest, HostNamesThatMerelyStartWith127AreNotLoopback) {
  for (const char* origin : {"http://127.0.0.1.evil.com", "http://127.evil.com:80"}) {
    EXPECT_FALSE(mcp::IsLoopbackOrigin(origin)) << origin;
  }
}

class EndpointTest : public McpTest {
 protected:
  void MakeEndpoint(mcp::HttpEndpointOptions options = {}) {
    Connect(Human());
    endpoint_ = std::make_unique<mcp::HttpEndpoint>(
        *server_, [](const httplib::Request&) -> Result<Actor> { return Human(); }, options);
  }
  httplib::Response Post(const Json& body, const std::multimap<std::string, std::string>& headers) {
    httplib::Request req;
    req.method = "POST";
    req.body = DumpJson(body);
    for (const auto& h : headers) req.headers.emplace(h.first, h.second);
    httplib::Response res;
    endpoint_->Handle(req, res);
    return res;
  }
  void TearDown() override { endpoint_.reset(); }
  std::unique_ptr<mcp::HttpEndpoint> endpoint_;
};

TEST_F(EndpointTest, RefusesWhatTheTransportForbids) {
  MakeEndpoint();
  httplib::Response init = Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {});
  ASSERT_EQ(init.status, 200) << init.body;
  const std::string session = init.get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  const struct {
    const char* name;
    Json body;
    std::multimap<std::string, std::string> headers;
    int status;
  } cases[] = {
      {"foreign origin", Rpc(2, "ping"), {{"Origin", "http://evil.com"}}, 403},
      {"no session", Rpc(2, "ping"), {}, 400},
      {"unknown session", Rpc(2, "ping"), {{"Mcp-Session-Id", "nope"}}, 404},
      // Any version the server speaks on a session is accepted (hosts send
      // their own default; the conformance suite sends 2025-03-26 after
      // negotiating another); one it does not speak is refused.
      {"another spoken version",
       Rpc(2, "ping"),
       {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-03-26"}},
       200},
      {"a version not spoken",
       Rpc(2, "ping"),
       {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2024-11-05"}},
       400},
      {"2026 without header", Rpc(2, "tools/list", Modern()), {}, 400},
      {"session ping", Rpc(2, "ping"), {{"Mcp-Session-Id", session}}, 200},
      {"2026 tools/list",
       Rpc(2, "tools/list", Modern()),
       {{"MCP-Protocol-Version", "2026-07-28"}},
       200},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Post(c.body, c.headers).status, c.status) << c.name;
  }
}

// Issue 15: a session compared only the caller's id and role, so a request
// with a second token of the same agent (fewer grants) rode on the grants of
// the token that opened the session; and a header contradicting the
// credential (PermissionDenied) was answered 400 instead of 403.
TEST_F(EndpointTest, ASessionKeepsItsCallersGrantsAndRefusesOtherGrants) {
  Connect(Human());
  endpoint_ = std::make_unique<mcp::HttpEndpoint>(
      *server_,
      [](const httplib::Request& req) -> Result<Actor> {
        if (req.has_header("X-Raise")) return PermissionDeniedError("X-Baton-Role: refused");
        Actor actor = Agent("coder");
        if (req.has_header("X-Grants")) actor.grants = {std::string(kGrantCommands)};
        return actor;
      },
      mcp::HttpEndpointOptions{});
  httplib::Response init =
      Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {{"X-Grants", "1"}});
  ASSERT_EQ(init.status, 200) << init.body;
  const std::string session = init.get_header_value("Mcp-Session-Id");
  const struct {
    const char* name;
    std::multimap<std::string, std::string> headers;
    int status;
  } cases[] = {
      {"same caller, same grants", {{"Mcp-Session-Id", session}, {"X-Grants", "1"}}, 200},
      {"same agent, fewer grants", {{"Mcp-Session-Id", session}}, 403},
      {"a header raising the role", {{"Mcp-Session-Id", session}, {"X-Raise", "1"}}, 403},
  };
  for (const auto& c : cases) {
    httplib::Response r = Post(Rpc(2, "ping"), c.headers);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << r.body;
  }
}

// Regression: expiring idle sessions freed a session while holding its own
// mutex (heap-use-after-free under ASan), and its destructor could deadlock
// against the change feed.
TEST_F(EndpointTest, SweepingIdleSessionsIsSafe) {
  MakeEndpoint({.session_idle_ms = -1});  // every session is idle at once
  httplib::Response first = Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {});
  httplib::Response second = Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {});
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(
      Post(Rpc(2, "ping"), {{"Mcp-Session-Id", first.get_header_value("Mcp-Session-Id")}}).status,
      404);
}

// Regression: at the session cap new hosts were refused for a day, since
// hosts seldom end their sessions; the least recently used one makes room.
TEST_F(EndpointTest, AFullEndpointMakesRoomByTheLeastRecentlyUsedSession) {
  MakeEndpoint({.max_sessions = 2});
  auto open = [&] {
    return Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {})
        .get_header_value("Mcp-Session-Id");
  };
  const std::string a = open(), b = open();
  EXPECT_EQ(Post(Rpc(2, "ping"), {{"Mcp-Session-Id", a}}).status, 200);  // b is now older
  const std::string c = open();
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(Post(Rpc(3, "ping"), {{"Mcp-Session-Id", b}}).status, 404) << "b made room";
  EXPECT_EQ(Post(Rpc(3, "ping"), {{"Mcp-Session-Id", a}}).status, 200);
  EXPECT_EQ(Post(Rpc(3, "ping"), {{"Mcp-Session-Id", c}}).status, 200);
}

TEST_F(EndpointTest, ABodyThatIsNotAnObjectIsAJsonRpcError) {
  MakeEndpoint();
  const std::string session = Post(Rpc(1, "initialize", {{"protocolVersion", "2025-06-18"}}), {})
                                  .get_header_value("Mcp-Session-Id");
  for (const Json& body : {Json::array({1, 2}), Json(42), Json("x")}) {
    httplib::Response res = Post(body, {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}});
    EXPECT_EQ(res.status, 400) << body.dump();
    Result<Json> parsed = ParseJson(res.body, "body");
    ASSERT_TRUE(parsed.ok()) << res.body;
    EXPECT_TRUE(parsed->contains("error")) << res.body;
  }
}

// Regression: a run whose interactionMode was not a string made listing
// sgai's tools throw on the change feed's thread, which ended the process.
TEST_F(SgaiToolsTest, OddStoredInteractionModeEndsNothing) {
  const std::string run = StartRun();
  Connect(Coordinator());
  Initialize();
  AllTools();  // the session now watches for tool-list changes
  const std::string uri = "baton://runs/" + run;
  ASSERT_TRUE(Request("resources/subscribe", {{"uri", uri}}).contains("result"));
  MustCall(*api_, "run.create", {{"profile", "sgai"}, {"meta", {{"interactionMode", 5}}}});
  AddProgress(run, "still alive");
  // The feed got past the odd run's event to the next one.
  EXPECT_TRUE(outbox_.WaitFor("notifications/resources/updated", uri));
  Json tools = AllTools();
  EXPECT_NE(FindTool(tools, "update_workflow_state"), nullptr);
}

TEST_F(McpTest, OnlyAnAdminMakesAnAdminToken) {
  Status refused = testing::Refused(*api_, "token.create",
                                    {{"holder", "x"}, {"holder_role", "admin"}},
                                    StatusCode::kPermissionDenied, Human());
  EXPECT_TRUE(Contains(refused.message(), "only an admin")) << refused.ToString();
  Json made = MustCall(*api_, "token.create", {{"holder", "x"}, {"holder_role", "admin"}},
                       Actor{"root", "admin"});
  EXPECT_EQ(made["role"], "admin");
}

// Regression: on stdio a cancellation may overtake the request it names
// (requests run on workers); it used to be lost.
TEST_F(McpTest, ACancellationThatArrivesFirstStillWithdrawsTheRequest) {
  Connect(Human());
  Initialize();
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 77}}}});
  EXPECT_TRUE(Send(Rpc(77, "tools/list", Modern())).is_null()) << "no answer is due";
  EXPECT_TRUE(Send(Rpc(78, "tools/list", Modern())).contains("result"));
}

// --- stdio -----------------------------------------------------------------

void WriteAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    ASSERT_GT(n, 0) << "write failed";
    done += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(McpStdioTest, KeepsServingAfterBadLines) {
  std::unique_ptr<Api> api = testing::OpenApi(":memory:");
  McpOptions options;
  options.max_message_bytes = 1024;
  std::unique_ptr<McpServer> server = McpServer::Create(*api, options).value();
  int in[2], out[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  std::thread serving([&] { mcp::ServeStdio(*server, Human(), in[0], out[1]); });
  const std::string oversized = DumpJson(Rpc(9, "ping", {{"pad", std::string(4000, 'x')}}));
  WriteAll(in[1], "not json\n{\"jsonrpc\": \"2.0\", \"id\": 1,\n42\n" + oversized + "\n\n" +
                      DumpJson(Rpc(2, "initialize", {{"protocolVersion", "2025-06-18"}})) + "\n" +
                      DumpJson(Rpc(3, "ping")));  // the last line has no newline
  ::close(in[1]);
  serving.join();
  ::close(out[1]);
  const std::string output = ReadAll(out[0]);
  ::close(out[0]);
  ::close(in[0]);

  std::vector<Json> lines;
  for (size_t start = 0; start < output.size();) {
    const size_t end = output.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "unterminated line: " << output.substr(start);
    Result<Json> line = ParseJson(output.substr(start, end - start), "line");
    ASSERT_TRUE(line.ok() && line->is_object()) << output.substr(start, end - start);
    EXPECT_EQ((*line)["jsonrpc"], "2.0");
    lines.push_back(*line);
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 6u) << output;
  const int errors[] = {mcp::kParseError, mcp::kParseError, mcp::kInvalidRequest,
                        mcp::kInvalidRequest};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ErrorCode(lines[i]), errors[i]) << lines[i].dump();
  EXPECT_TRUE(Contains(lines[3]["error"]["message"], "larger than")) << lines[3].dump();
  // Requests run on workers, so their answers may come in either order.
  std::map<int64_t, Json> answers;
  for (int i = 4; i < 6; ++i) answers[lines[i]["id"].get<int64_t>()] = lines[i];
  EXPECT_EQ(answers[2]["result"]["protocolVersion"], "2025-06-18") << answers[2].dump();
  EXPECT_EQ(answers[3]["result"], Json::object()) << answers[3].dump();
}

}  // namespace
}  // namespace baton
