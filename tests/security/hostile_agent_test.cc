// Issue 15, "Must show": a hostile agent. An agent holding an ordinary agent
// token (no grants) tries a table of attacks on a running `baton serve` —
// paths with NUL, through symlinks and "..", the store's files by every
// spelling, role and identity headers, other agents' tasks and inboxes,
// human-only operations, command-running graph definitions, oversized and
// malformed bodies. Every one is refused; afterwards the ledger has not moved,
// no file outside the roots changed, and `baton verify --deep` passes.

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "test_util.h"
#include "util/sha256.h"

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

struct Attack {
  std::string name;
  std::string op;         // POST /v1/ops/<op>; empty: "raw" is the whole request
  Json input;             // the body, unless "body" is set
  std::string body;       // a body sent as is
  httplib::Headers headers;
  bool with_token = true;
};

Json CliJson(const std::string& store, std::vector<std::string> args) {
  args.insert(args.begin(), {"--store", store, "--output", "json"});
  ProcessResult r = RunBaton(args);
  EXPECT_EQ(r.exit_code, 0) << Json(args).dump() << "\n" << r.out << r.err;
  Result<Json> parsed = ParseJson(r.out, "baton output");
  return parsed.ok() ? *parsed : Json();
}

// Every regular file under "root" (symlinks not followed) with its digest.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::end(it); it.increment(ec)) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out[it->path().string()] = Sha256Hex(bytes);
  }
  return out;
}

class HostileAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_.path() + "/.baton");
    store_ = testing::InitStore(root_.path() + "/.baton/baton.db");
    // What the human set up at the terminal: a run, a task another agent
    // holds, a question for the human, a definition with a command node.
    CliJson(store_, {"run", "create", "--id", "run-h", "--title", "hostile"});
    CliJson(store_, {"run", "set-status", "run-h", "running"});
    CliJson(store_, {"--agent", "coord", "--role", "coordinator", "agent", "register"});
    CliJson(store_, {"task", "create", "--run", "run-h", "--id", "task-a", "--title", "a"});
    CliJson(store_, {"task", "create", "--run", "run-h", "--id", "task-b", "--title", "b"});
    CliJson(store_, {"--agent", "other", "agent", "register"});
    Json claim = CliJson(store_, {"--agent", "other", "task", "claim", "--task", "task-a"});
    other_epoch_ = claim["lease"].is_object() ? claim["lease"].value("epoch", 1) : 1;
    Json asked = CliJson(store_, {"--agent", "coord", "--role", "coordinator", "question", "ask",
                                  "--json",
                                  R"({"run": "run-h", "questions": [{"question": "ship it?",
                                      "choices": ["yes", "no"]}]})"});
    question_ = asked.value("id", "");
    CliJson(store_, {"--agent", "other", "mail", "send", "--to", "coord", "--body", "private"});
    token_ = CliJson(store_, {"token", "create", "mallory", "--holder-role", "agent"})
                 .value("token", "");
    std::ofstream(root_.path() + "/flow.yaml")
        << "id: pwn\nnodes:\n  - name: RUN\n    type: command\n    command: touch "
        << outside_.path() << "/pwned\n    then: END\n";
    std::ofstream(root_.path() + "/eval.yaml")
        << "id: calm\nnodes:\n  - name: E\n    type: eval\n    code: 'return {}'\n    then: END\n";
    std::ofstream(outside_.path() + "/notes.txt") << "the user's file\n";
    std::ofstream(root_.path() + "/build.sh") << "#!/bin/sh\nmake\n";
    fs::permissions(root_.path() + "/build.sh", fs::perms::owner_all);
    fs::create_directory_symlink(root_.path() + "/.baton", root_.path() + "/link");
    fs::create_directory_symlink(outside_.path(), root_.path() + "/out");
  }

  std::vector<Attack> Attacks() const {
    const std::string db = store_;
    const std::string r = root_.path();
    const std::string nul("\0x", 2);
    const Json kCommandGraph = "id: pwn\nnodes:\n  - name: RUN\n    type: command\n"
                               "    command: touch " + outside_.path() + "/pwned\n    then: END\n";
    auto bind = [&](const std::string& name, const std::string& path) {
      return Attack{name, "mirror.bind", {{"run", "run-h"}, {"format", "graph"}, {"path", path}}};
    };
    auto as_header = [&](const std::string& name, const std::string& op, Json input,
                         httplib::Headers headers) {
      return Attack{name, op, std::move(input), "", std::move(headers)};
    };
    std::vector<Attack> a = {
        // Paths: the store's own files by every spelling, and out of the roots.
        bind("mirror onto the store + NUL", db + nul),
        bind("mirror onto the store", db),
        bind("mirror onto the store's WAL", db + "-wal"),
        bind("mirror onto the store's shared memory", db + "-shm"),
        bind("mirror onto the store's journal", db + "-journal"),
        bind("mirror onto the store through ./", r + "/./.baton/./baton.db"),
        bind("mirror onto the store through ..", r + "/.baton/../.baton/baton.db"),
        bind("mirror onto the store through //", r + "//.baton//baton.db"),
        bind("mirror onto the store through a symlinked folder", r + "/link/baton.db"),
        bind("mirror into the store's folder", r + "/.baton/state.json"),
        bind("mirror outside the roots", outside_.path() + "/notes.txt"),
        bind("mirror outside the roots through a symlink", r + "/out/notes.txt"),
        bind("mirror escaping the root with ..", r + "/../" + fs::path(outside_.path()).filename().string() + "/x.json"),
        bind("mirror with a newline in the path", r + "/state\n.json"),
        bind("mirror with a relative path", "../../etc/x.json"),
        {"graph from a file outside the roots", "graph.run", {{"file", "/etc/passwd"}}},
        {"graph state dir in the store's folder", "graph.run",
         {{"file", r + "/eval.yaml"}, {"state_dir", r + "/.baton"}}},
        {"graph workdir outside the roots", "graph.run",
         {{"file", r + "/flow.yaml"}, {"workdir", "/"}}},
        {"graph with a command node, no grant", "graph.run", {{"file", r + "/flow.yaml"}}},
        {"graph inline with a command node", "graph.run", {{"text", kCommandGraph}}},
        {"graph inline with only evals, no grant", "graph.run",
         {{"text", "id: e\nnodes:\n  - name: E\n    type: eval\n    code: 'return {}'\n"
                   "    then: END\n"}}},
        {"team clone of a repo outside the roots", "team.create",
         {{"name", "t1"}, {"repo", outside_.path()}}},
        {"rewrite a run by importing it", "run.import",
         {{"format", "graph"}, {"run", "run-h"},
          {"content", R"({"id": "run-h", "status": "completed", "context": {"evil": 1},
                          "currentNode": "END", "executionPath": []})"}}},
        {"agent registers a delivery command", "agent.register",
         {{"delivery_command", "touch " + outside_.path() + "/pwned"}}},
        // Roles: headers never raise one.
        as_header("answer as human by X-Baton-Role", "question.answer",
                  {{"id", question_}, {"choices", {"yes"}}}, {{"X-Baton-Role", "human"}}),
        as_header("make an admin token by X-Baton-Role", "token.create",
                  {{"holder", "mallory"}, {"holder_role", "admin"}}, {{"X-Baton-Role", "admin"}}),
        as_header("complete the run as coordinator by sgai's identity header", "run.set_status",
                  {{"id", "run-h"}, {"status", "complete"}},
                  {{"X-Sgai-Agent-Identity", "coordinator|x|y"}}),
        as_header("speak as another agent by X-Baton-Agent", "task.complete",
                  {{"task", "task-a"}, {"epoch", other_epoch_}}, {{"X-Baton-Agent", "other"}}),
        // Human-only operations.
        {"answer the human's question", "question.answer",
         {{"id", question_}, {"choices", {"yes"}}}},
        {"approve the run", "approval.approve", {{"run", "run-h"}}},
        {"reject the run", "approval.reject", {{"run", "run-h"}}},
        {"make a human token", "token.create", {{"holder", "mallory"}, {"holder_role", "human"}}},
        {"make an admin token", "token.create", {{"holder", "mallory"}, {"holder_role", "admin"}}},
        {"list the tokens", "token.list", Json::object()},
        {"cancel the human's question", "question.cancel", {{"id", question_}}},
        // Other agents' work and mail.
        {"complete another agent's task", "task.complete", {{"task", "task-a"}, {"epoch", other_epoch_}}},
        {"heartbeat another agent's task", "task.heartbeat", {{"task", "task-a"}, {"epoch", other_epoch_}}},
        {"release another agent's task", "task.release", {{"task", "task-a"}, {"epoch", other_epoch_}}},
        {"claim as another agent", "task.claim", {{"task", "task-b"}, {"agent", "other"}}},
        {"read another agent's inbox", "mail.inbox", {{"agent", "coord"}}},
        {"send mail as another agent", "mail.send", {{"to", "coord"}, {"from", "other"}, {"body", "x"}}},
        // Credentials.
        {"no credential", "run.list", Json::object(), "", {}, false},
        {"a made-up token", "run.list", Json::object(), "", {{"Authorization", "Bearer baton_0000"}}, false},
        // Bodies.
        {"duplicate keys", "task.create", nullptr, R"({"run": "run-h", "title": "a", "title": "b"})"},
        {"priority 2^63", "task.create", nullptr,
         R"({"run": "run-h", "title": "x", "priority": 9223372036854775808})"},
        {"malformed JSON", "task.create", nullptr, R"({"run": "run-h", "title": )"},
        {"nesting 10,000 deep", "task.create", nullptr, std::string(10000, '[') + std::string(10000, ']')},
        {"a body over the limit", "task.create", nullptr,
         R"({"run": "run-h", "title": ")" + std::string(5 << 20, 'x') + "\"}"},
        {"a non-object body", "task.create", nullptr, "[1, 2, 3]"},
        {"an unknown operation", "store.drop", Json::object()},
        as_header("a foreign Host (DNS rebinding)", "run.list", Json::object(),
                  {{"Host", "evil.example:8321"}}),
        as_header("a foreign Origin", "run.list", Json::object(),
                  {{"Origin", "http://evil.example"}}),
    };
    return a;
  }

  TempDir root_;
  TempDir outside_;
  std::string store_;
  std::string token_;
  std::string question_;
  int64_t other_epoch_ = 1;
};

// Sends each attack with "token"; every one must be refused with a reason,
// and the ledger, the files outside the roots and the store must be as they
// were. "not_by" (optional) is a phrase no refusal may contain, so that a
// table meant for the path rules is not refused by something else.
void ExpectAllRefused(const std::string& store, const std::string& outside,
                      const std::string& token, const std::vector<Attack>& attacks,
                      const std::string& not_by = "") {
  const auto outside_before = Snapshot(outside);
  const int64_t ledger_before = LedgerLength(*OpenApi(store));
  {
    ServeProcess serve(store);
    httplib::Client client("127.0.0.1", serve.port());
    client.set_read_timeout(60, 0);
    for (const Attack& attack : attacks) {
      httplib::Headers headers = attack.headers;
      if (attack.with_token) headers.emplace("Authorization", "Bearer " + token);
      const std::string body = attack.body.empty() ? attack.input.dump() : attack.body;
      httplib::Result res = client.Post("/v1/ops/" + attack.op, headers, body, "application/json");
      ASSERT_TRUE(res) << attack.name << ": no answer (" << httplib::to_string(res.error()) << ")";
      // The table, as the refusals read: the rule each one names.
      std::cout << res->status << "  " << attack.name << ": "
                << res->body.substr(0, res->body.find('\n')).substr(0, 240) << std::endl;
      EXPECT_GE(res->status, 400) << attack.name << " was accepted: " << res->body;
      EXPECT_LT(res->status, 500) << attack.name << ": " << res->body;
      // A refusal says why: the rule, in an error object.
      EXPECT_NE(res->body.find("\"message\""), std::string::npos) << attack.name << ": " << res->body;
      if (!not_by.empty()) {
        EXPECT_EQ(res->body.find(not_by), std::string::npos)
            << attack.name << " was refused, but not by the rule under test: " << res->body;
      }
    }
    // The server still answers the caller.
    httplib::Result alive = client.Post("/v1/ops/run.show", {{"Authorization", "Bearer " + token}},
                                        R"({"id": "run-h"})", "application/json");
    ASSERT_TRUE(alive);
    EXPECT_EQ(alive->status, 200) << alive->body;
    EXPECT_EQ(serve.Signal(SIGTERM), 0);
  }
  EXPECT_EQ(Snapshot(outside), outside_before) << "a file outside the roots changed";
  EXPECT_FALSE(fs::exists(outside + "/pwned")) << "a command ran";
  EXPECT_EQ(LedgerLength(*OpenApi(store)), ledger_before) << "a refused call changed the store";
  ProcessResult verify = RunBaton({"--store", store, "verify", "--deep"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(HostileAgentTest, EveryAttackIsRefusedAndNothingChanges) {
  ASSERT_FALSE(token_.empty());
  ASSERT_FALSE(question_.empty());
  const std::vector<Attack> attacks = Attacks();
  ASSERT_GE(attacks.size(), 40u);
  ExpectAllRefused(store_, outside_.path(), token_, attacks);
}

// A prompt-injected coordinator may bind mirrors and run graphs, so there the
// path rules and the grants themselves are what refuse: no refusal may be
// the role rule's.
TEST_F(HostileAgentTest, AHostileCoordinatorMeetsThePathRulesAndTheGrants) {
  const std::string coordinator =
      CliJson(store_, {"token", "create", "eve", "--holder-role", "coordinator"}).value("token", "");
  std::vector<Attack> attacks;
  for (const Attack& a : Attacks()) {
    if (a.op == "mirror.bind" || a.op == "graph.run" || a.op == "team.create") {
      attacks.push_back(a);
    }
  }
  const std::string r = root_.path();
  const std::string nul("\0x", 2);
  for (const std::string& file : {std::string("/etc/passwd"), store_ + nul, r + "/link/baton.db",
                                  r + "/out/notes.txt"}) {
    attacks.push_back({"graph.check reads " + file.substr(0, file.find('\0')), "graph.check",
                       {{"file", file}}});
  }
  // A review found these: a mirror bound over a file baton did not write
  // (an executable script keeps its mode, and the run's text becomes its
  // lines), and a gate script planted in an sgai run for someone else to run.
  attacks.push_back({"mirror over the project's script", "mirror.bind",
                     {{"run", "run-h"}, {"format", "graph"}, {"path", r + "/build.sh"}}});
  attacks.push_back({"sgai run carrying a gate script", "sgai.start",
                     {{"goal", "---\ncompletionGateScript: touch " + outside_.path() +
                                   "/pwned\n---\n# ship it\n"}}});
  ASSERT_GE(attacks.size(), 25u);
  const std::string script_before = Snapshot(r).at(r + "/build.sh");
  ExpectAllRefused(store_, outside_.path(), coordinator, attacks, "requires role");
  EXPECT_EQ(Snapshot(r).at(r + "/build.sh"), script_before) << "the project's script changed";
}

}  // namespace
}  // namespace baton::testing
