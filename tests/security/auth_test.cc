// Issue 15, "What was seen" 3: `baton serve` with no flags believed anyone.
// A request without headers was the human; X-Baton-Role was believed, so an
// agent answered the human's questions and approved runs; `--auth none` gave
// the nameless caller every grant. Now callers prove who they are (the
// human's secret beside the store, agents' tokens), no header raises a role,
// tokens carry grants only a holder can give, and `--auth none` is named,
// loopback only, loud and grantless. The graph.run grant check itself is
// tests/security/paths_test.cc's (helper "paths"); here the grants a caller
// holds are shown through what it may give (token.create refuses a grant its
// caller lacks) and through token.resolve.

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "engine/core/tokens.h"
#include "test_util.h"

namespace baton::testing {
namespace {

struct Reply {
  int status = 0;
  Json body;
};

Reply Post(int port, const std::string& op, const Json& body, const httplib::Headers& headers) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  auto res = client.Post("/v1/ops/" + op, headers, body.dump(), "application/json");
  if (!res) return {-1, Json()};
  return {res->status, Json::parse(res->body, nullptr, false)};
}

httplib::Headers Bearer(const std::string& secret, httplib::Headers more = {}) {
  more.emplace("Authorization", "Bearer " + secret);
  return more;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Describe(const httplib::Headers& headers) {
  std::string out;
  for (const auto& [k, v] : headers)
    out += k + ": " + (k == "Authorization" ? v.substr(0, 16) + "..." : v) + "; ";
  return out;
}

class AuthTest : public ::testing::Test {
 protected:
  Json Cli(std::vector<std::string> args, const std::string& agent = "",
           const std::string& role = "") {
    std::vector<std::string> full = {"--store", store_, "--output", "json"};
    if (!agent.empty()) full.insert(full.end(), {"--agent", agent});
    if (!role.empty()) full.insert(full.end(), {"--role", role});
    full.insert(full.end(), args.begin(), args.end());
    ProcessResult r = RunBaton(full);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.out << r.err;
    return Json::parse(r.out, nullptr, false);
  }
  int64_t Events() { return Cli({"status"})["counts"].value("events", int64_t{-1}); }

  TempDir dir_;
  const std::string store_ = testing::InitStore(dir_.File("baton.db"));
};

TEST_F(AuthTest, ServeWithNoFlagsRefusesARequestWithoutACredential) {
  ServeProcess server(store_);
  ASSERT_GT(server.port(), 0);
  ASSERT_FALSE(server.secret().empty()) << "serve printed no start-up link carrying the secret";
  const httplib::Headers cases[] = {
      {},
      {{"X-Baton-Role", "human"}},
      {{"X-Baton-Agent", "root"}, {"X-Baton-Role", "admin"}},
      {{"X-Sgai-Agent-Identity", "coordinator|gpt|x"}},
      {{"Authorization",
        "Bearer baton_0000000000000000000000000000000000000000000000000000000000000000"}},
      {{"Authorization", "Basic " + server.secret()}},
      {{"Authorization", "Bearer " + server.secret() + "x"}},
  };
  for (const httplib::Headers& headers : cases) {
    Reply r = Post(server.port(), "run.create", {{"profile", "sgai"}}, headers);
    EXPECT_EQ(r.status, 401) << Describe(headers) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], "Unauthenticated") << Describe(headers) << r.body.dump();
  }
  Reply none = Post(server.port(), "run.create", {{"profile", "sgai"}}, {});
  EXPECT_NE(none.body["error"]["message"].get<std::string>().find("Authorization"),
            std::string::npos)
      << "the refusal names the rule: " << none.body.dump();
  // The human's link is the human: it may do what the human does.
  Reply human = Post(server.port(), "run.create", {{"profile", "sgai"}}, Bearer(server.secret()));
  EXPECT_EQ(human.status, 200) << human.body.dump();
  server.Signal(SIGTERM);
  EXPECT_EQ(Cli({"run", "list"})["runs"].size(), 1u) << "only the human's request made a run";
}

TEST_F(AuthTest, AnAgentTokenCannotSpeakAsTheHumanByHeader) {
  const std::string run = Cli({"run", "create", "--profile", "sgai"})["id"];
  const Json asked = Cli(
      {"question", "ask", "--json",
       Json{{"run", run}, {"questions", {{{"question", "Deploy?"}, {"choices", {"yes", "no"}}}}}}
           .dump()},
      "coord", "coordinator");
  const std::string question = asked["id"];
  const std::string token = MakeToken(store_, "coder", "agent");
  ServeProcess server(store_);
  ASSERT_GT(server.port(), 0);
  const int64_t before = Events();
  const Json answer = {{"id", question}, {"choices", {"yes"}}};
  const Json approve = {{"run", run}};
  const struct {
    httplib::Headers headers;
    const char* op;
    Json body;
    int status;
  } cases[] = {
      {{{"X-Baton-Role", "human"}}, "question.answer", answer, 403},
      {{{"X-Baton-Role", "admin"}}, "question.answer", answer, 403},
      {{{"X-Baton-Agent", "alice"}, {"X-Baton-Role", "human"}}, "question.answer", answer, 403},
      {{{"X-Sgai-Agent-Identity", "coordinator|gpt|x"}}, "approval.approve", approve, 403},
      {{{"X-Baton-Role", "human"}}, "approval.approve", approve, 403},
      {{}, "question.answer", answer, 403},  // the token's own role: agent
      {{}, "approval.approve", approve, 403},
      {{{"X-Baton-Role", "human"}},
       "token.create",
       {{"holder", "me"}, {"holder_role", "human"}},
       403},
  };
  for (const auto& c : cases) {
    Reply r = Post(server.port(), c.op, c.body, Bearer(token, c.headers));
    EXPECT_EQ(r.status, c.status) << c.op << " with " << Describe(c.headers) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], "PermissionDenied") << c.op << " " << r.body.dump();
  }
  // A header that repeats the token's identity is fine.
  Reply same = Post(server.port(), "store.status", Json::object(),
                    Bearer(token, {{"X-Baton-Agent", "coder"}, {"X-Baton-Role", "agent"}}));
  EXPECT_EQ(same.status, 200) << same.body.dump();
  server.Signal(SIGTERM);
  EXPECT_EQ(Events(), before) << "a refused request changed the ledger";
  EXPECT_EQ(Cli({"question", "show", question})["status"], "open");
  EXPECT_EQ(Cli({"run", "show", run})["status"], "waiting-for-human");
}

TEST_F(AuthTest, TheHumanSecretFileIsOwnerOnlyAndAnyOtherIsRefused) {
  const std::string path = store_ + ".secret";
  ProcessResult made = RunBaton({"--store", store_, "url"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0) << path << " was not made";
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u) << path;
  EXPECT_EQ(st.st_uid, geteuid());
  std::string secret = Slurp(path);
  secret = secret.substr(0, secret.find('\n'));
  EXPECT_EQ(made.out, "http://127.0.0.1:8321/#token=" + secret + "\n");
  EXPECT_EQ(RunBaton({"--store", store_, "url"}).out, made.out) << "the secret changed";
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
        << "a temporary file was left: " << entry.path();
  }

  // A readable one is refused, naming the file and the rule; serve does not start.
  const struct {
    mode_t mode;
    const char* why;
  } modes[] = {{0644, "0644"}, {0640, "0640"}, {0604, "0604"}, {0620, "0620"}};
  for (const auto& m : modes) {
    ASSERT_EQ(chmod(path.c_str(), m.mode), 0);
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"--store", store_, "url"},
          std::vector<std::string>{"--store", store_, "serve", "--listen", "127.0.0.1:0"}}) {
      ProcessResult r = RunBaton(cmd);
      EXPECT_NE(r.exit_code, 0) << cmd[2] << " with mode " << m.why;
      EXPECT_NE(r.err.find(path), std::string::npos) << cmd[2] << " " << m.why << ": " << r.err;
      EXPECT_NE(r.err.find("0600"), std::string::npos) << cmd[2] << " " << m.why << ": " << r.err;
      EXPECT_EQ(r.out.find(secret), std::string::npos) << "a refused secret was printed";
    }
  }
  // Another user's file, even private, is refused (only root can make one).
  if (geteuid() == 0) {
    ASSERT_EQ(chmod(path.c_str(), 0600), 0);
    ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
    ProcessResult foreign = RunBaton({"--store", store_, "url"});
    EXPECT_NE(foreign.exit_code, 0);
    EXPECT_NE(foreign.err.find("must belong to the user running baton"), std::string::npos)
        << foreign.err;
    ASSERT_EQ(chown(path.c_str(), 0, 0), 0);
  }
  // A symbolic link, even to a private file, is refused.
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_EQ(rename(path.c_str(), dir_.File("elsewhere").c_str()), 0);
  ASSERT_EQ(symlink(dir_.File("elsewhere").c_str(), path.c_str()), 0);
  ProcessResult linked = RunBaton({"--store", store_, "url"});
  EXPECT_NE(linked.exit_code, 0);
  EXPECT_NE(linked.err.find("symbolic link"), std::string::npos) << linked.err;

  // Put back, serve prints it only in the start-up link, never on stderr.
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(rename(dir_.File("elsewhere").c_str(), path.c_str()), 0);
  {
    ServeProcess server(store_, {}, dir_.File("serve.err"));
    EXPECT_EQ(server.secret(), secret);
    // Answered once, so it is serving: a SIGTERM that lands between the
    // banner and the accept loop is lost (HttpServer::Stop sees no running
    // server), which would hang this test.
    EXPECT_EQ(Post(server.port(), "store.status", Json::object(), Bearer(secret)).status, 200);
    server.Signal(SIGTERM);
  }
  EXPECT_EQ(Slurp(dir_.File("serve.err")).find(secret), std::string::npos);
}

TEST(AuthSecretTest, ManyMakingTheSecretAtOnceAgreeOnOne) {
  TempDir dir;
  const std::string path = HumanSecretPath(dir.File("baton.db"));
  EXPECT_EQ(path, dir.File("baton.db.secret"));
  EXPECT_EQ(HumanSecretPath(":memory:"), "");
  constexpr int kThreads = 8;
  std::vector<std::string> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Result<std::string> s = LoadOrCreateHumanSecret(path);
      got[i] = s.ok() ? *s : "error: " + s.status().ToString();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(got[i], got[0]) << "thread " << i;
  EXPECT_GE(got[0].size(), 32u) << got[0];
  // A file holding no secret is refused rather than believed.
  const std::string empty = dir.File("empty.secret");
  { std::ofstream(empty) << "\n"; }
  ASSERT_EQ(chmod(empty.c_str(), 0600), 0);
  Result<std::string> bad = LoadOrCreateHumanSecret(empty);
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss) << bad.status().ToString();
  // One that cannot be made (its folder is missing) is named as given.
  const std::string nowhere = dir.File("missing/human.secret");
  Result<std::string> unmade = LoadOrCreateHumanSecret(nowhere);
  EXPECT_EQ(unmade.status().code(), StatusCode::kFailedPrecondition) << unmade.status().ToString();
  EXPECT_EQ(unmade.status().message().rfind(nowhere + ": ", 0), 0u) << unmade.status().ToString();
}

TEST_F(AuthTest, AnAgentTokenCannotMakeAHumanOrAdminTokenNorAnyoneGiveAGrantItLacks) {
  const std::string agent = MakeToken(store_, "coder", "agent");
  const std::string human_bare = MakeToken(store_, "bob", "human");
  const std::string human_commands = MakeToken(store_, "carol", "human", {"commands"});
  ServeProcess server(store_);
  ASSERT_GT(server.port(), 0);
  auto create = [](const char* role, std::vector<std::string> grants = {}) {
    return Json{{"holder", "x"}, {"holder_role", role}, {"grants", grants}};
  };
  const struct {
    const char* who;
    std::string secret;
    httplib::Headers headers;
    Json body;
    int status;
    const char* names;  // in the refusal
  } cases[] = {
      {"agent", agent, {}, create("human"), 403, "requires role"},
      {"agent", agent, {}, create("admin"), 403, "requires role"},
      {"agent", agent, {}, create("agent"), 403, "requires role"},
      {"agent+role header",
       agent,
       {{"X-Baton-Role", "human"}},
       create("admin"),
       403,
       "X-Baton-Role"},
      {"agent+role header",
       agent,
       {{"X-Baton-Role", "admin"}},
       create("human"),
       403,
       "X-Baton-Role"},
      {"human without grants",
       human_bare,
       {},
       create("agent", {"commands"}),
       403,
       "grants: commands"},
      {"human without grants", human_bare, {}, create("agent", {"paths"}), 403, "grants: paths"},
      {"human with commands",
       human_commands,
       {},
       create("agent", {"definitions"}),
       403,
       "grants: definitions"},
      {"human with commands", human_commands, {}, create("admin"), 403, "admin"},
      {"the human's link", server.secret(), {}, create("admin"), 403, "admin"},
      {"human with commands", human_commands, {}, create("agent", {"commands"}), 200, ""},
      {"the human's link",
       server.secret(),
       {},
       create("agent", {"commands", "definitions", "paths"}),
       200,
       ""},
  };
  for (const auto& c : cases) {
    Reply r = Post(server.port(), "token.create", c.body, Bearer(c.secret, c.headers));
    EXPECT_EQ(r.status, c.status) << c.who << " " << c.body.dump() << ": " << r.body.dump();
    if (c.status != 200) {
      const std::string message = r.body["error"].value("message", "");
      EXPECT_NE(message.find(c.names), std::string::npos)
          << c.who << " " << c.body.dump() << ": " << message;
    } else {
      EXPECT_EQ(r.body["grants"], c.body["grants"]) << c.who << ": " << r.body.dump();
    }
  }
  server.Signal(SIGTERM);
  // Only the two allowed tokens were made (three before the server).
  EXPECT_EQ(Cli({"token", "list"})["tokens"].size(), 5u);
}

TEST_F(AuthTest, AuthNoneIsLoopbackOnlyWarnsAndGivesNoGrants) {
  ProcessResult wide =
      RunBaton({"--store", store_, "serve", "--auth", "none", "--listen", "0.0.0.0:0"});
  EXPECT_EQ(wide.exit_code, 2) << wide.err;
  EXPECT_NE(wide.err.find("--auth none"), std::string::npos) << wide.err;
  EXPECT_NE(wide.err.find("loopback"), std::string::npos) << wide.err;

  ServeProcess server(store_, {"--auth", "none"}, dir_.File("serve.err"));
  ASSERT_GT(server.port(), 0);
  const std::string warning = Slurp(dir_.File("serve.err"));
  EXPECT_NE(warning.find("WARNING: --auth none"), std::string::npos) << warning;
  EXPECT_NE(warning.find("No caller holds a grant"), std::string::npos) << warning;
  EXPECT_TRUE(server.secret().empty()) << "no secret in the link under --auth none";
  // The nameless caller is still the human by role, but holds no grant: it
  // cannot give one, whatever its headers say.
  const httplib::Headers cases[] = {{}, {{"X-Baton-Role", "human"}}, {{"X-Baton-Role", "admin"}}};
  for (const httplib::Headers& headers : cases) {
    for (const char* grant : {"commands", "definitions", "paths"}) {
      Reply r = Post(server.port(), "token.create",
                     {{"holder", "x"}, {"holder_role", "agent"}, {"grants", {grant}}}, headers);
      EXPECT_EQ(r.status, 403) << Describe(headers) << grant << ": " << r.body.dump();
      EXPECT_NE(r.body["error"].value("message", "").find(std::string("grants: ") + grant),
                std::string::npos)
          << r.body.dump();
    }
  }
  Reply plain =
      Post(server.port(), "token.create", {{"holder", "x"}, {"holder_role", "agent"}}, {});
  EXPECT_EQ(plain.status, 200) << plain.body.dump();
}

TEST_F(AuthTest, BatonMcpHoldsOnlyTheGrantsItIsGiven) {
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  const std::string call =
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"token_create","arguments":{"holder":"x","holder_role":"agent","grants":["commands"]}}})";
  const struct {
    std::vector<std::string> grants;
    bool refused;
  } cases[] = {{{}, true}, {{"--grant", "paths"}, true}, {{"--grant", "commands"}, false}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--store", store_, "--agent", "me", "--role", "human", "mcp"};
    args.insert(args.end(), c.grants.begin(), c.grants.end());
    ProcessResult r = RunBaton(args, {}, init + "\n" + call + "\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Json answer;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      Json j = Json::parse(line, nullptr, false);
      if (j.is_object() && j.value("id", 0) == 2) answer = j;
    }
    ASSERT_TRUE(answer.contains("result")) << r.out;
    EXPECT_EQ(answer["result"].value("isError", false), c.refused) << answer.dump();
    if (c.refused) {
      EXPECT_NE(answer.dump().find("grants: commands"), std::string::npos) << answer.dump();
    }
  }
}

TEST(AuthTokenTest, TokensCarryTheirGrantsThroughResolveListAndTheLedger) {
  auto api = OpenApi(":memory:");
  const Json made = MustCall(
      *api, "token.create",
      {{"holder", "coder"}, {"holder_role", "agent"}, {"grants", {"paths", "commands", "paths"}}},
      LocalHumanActor());
  EXPECT_EQ(made["grants"], Json({"commands", "paths"})) << made.dump();
  const Json who = MustCall(*api, "token.resolve", {{"token", made["token"]}}, SystemActor());
  EXPECT_EQ(who["grants"], Json({"commands", "paths"})) << who.dump();
  EXPECT_EQ(who["role"], "agent");
  const Json list = MustCall(*api, "token.list", Json::object());
  ASSERT_EQ(list["tokens"].size(), 1u);
  EXPECT_EQ(list["tokens"][0]["grants"], Json({"commands", "paths"}));
  const Json events = MustCall(*api, "ledger.events", {{"kind", "token.created"}});
  ASSERT_EQ(events["events"].size(), 1u) << events.dump();
  EXPECT_EQ(events["events"][0]["payload"]["grants"], Json({"commands", "paths"})) << events.dump();
  // A caller without a grant cannot give it; unknown grants are refused by name.
  Status lacking = Refused(*api, "token.create",
                           {{"holder", "x"}, {"holder_role", "agent"}, {"grants", {"commands"}}},
                           StatusCode::kPermissionDenied, Human());
  EXPECT_NE(lacking.message().find("grants: commands"), std::string::npos) << lacking.ToString();
  Status unknown = Refused(*api, "token.create",
                           {{"holder", "x"}, {"holder_role", "agent"}, {"grants", {"root"}}},
                           StatusCode::kInvalidArgument, LocalHumanActor());
  EXPECT_NE(unknown.message().find("grants"), std::string::npos) << unknown.ToString();
}

}  // namespace
}  // namespace baton::testing
