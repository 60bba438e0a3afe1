// Graph workflow definitions (model/graph_def.h): the issue processor in YAML
// and JSON reads clean with the right entry, result keys and defaults; each
// kind of bad definition is refused naming the file, node and field, alone;
// Mermaid output; and `baton graph check|mermaid` through the real binary.

#include "model/graph_def.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "test_env.h"

namespace baton {
namespace {

std::string DataDir() { return std::string(BATON_SOURCE_DIR) + "/tests/data/graph"; }

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

GraphDef MustParse(const std::string& text, const std::string& source) {
  Result<GraphDef> def = ParseGraphDef(text, source);
  EXPECT_TRUE(def.ok()) << def.status().ToString() << "\n" << text;
  return def.ok() ? *def : GraphDef();
}

// Everything a definition holds, for comparing two readings.
Json Flatten(const GraphDef& def) {
  Json nodes = Json::array();
  for (const GraphNode& n : def.nodes) {
    Json cases = Json::array();
    for (const GraphCase& c : n.then.cases) {
      cases.push_back({{"when", c.when ? Json(*c.when) : Json()}, {"goto", c.target}});
    }
    nodes.push_back({{"name", n.name},
                     {"type", n.type},
                     {"result_key", n.result_key},
                     {"options", n.options},
                     {"retry", {n.retry.max, n.retry.backoff_ms}},
                     {"kind", static_cast<int>(n.then.kind)},
                     {"target", n.then.target},
                     {"cases", cases},
                     {"lua", n.then.lua}});
  }
  return {{"id", def.id}, {"context", def.initial_context}, {"nodes", nodes}};
}

TEST(GraphDefTest, IssueProcessorReadsCleanWithItsEntryResultKeysAndDefaults) {
  const GraphDef def = MustParse(Slurp(DataDir() + "/issue-processor.yaml"), "issue.yaml");
  ASSERT_EQ(def.nodes.size(), 7u);
  EXPECT_EQ(def.id, "issue-processor");
  EXPECT_EQ(def.entry(), "ANALYZE");
  EXPECT_EQ(def.source, "issue.yaml");
  EXPECT_EQ(def.initial_context, Json({{"issue", 42}, {"maxFixAttempts", 3}, {"fixAttempts", 0}}));
  const std::pair<const char*, const char*> keys[] = {{"ANALYZE", "analysis"},
                                                      {"PLAN", "plan"},
                                                      {"IMPLEMENT", "lastDynamicAgentResult"},
                                                      {"TEST", "lastCommandResult"},
                                                      {"COUNT_FIX", "lastEvalResult"},
                                                      {"FIX", "lastDynamicAgentResult"},
                                                      {"REPORT", "lastSlashCommandResult"}};
  for (const auto& [name, key] : keys) {
    const GraphNode* node = def.Find(name);
    ASSERT_NE(node, nullptr) << name;
    EXPECT_EQ(node->result_key, key) << name;
  }
  const GraphNode& test = *def.Find("TEST");
  EXPECT_EQ(test.options["timeoutMs"], 300000) << "the command default";
  EXPECT_EQ(def.Find("ANALYZE")->options["timeoutMs"], 60000) << "as written";
  EXPECT_EQ(def.Find("PLAN")->options["agentCommand"], Json({"claude", "-p"}));
  EXPECT_EQ(def.Find("REPORT")->options["timeoutMs"], 600000);
  EXPECT_EQ(def.Find("IMPLEMENT")->retry.max, 2);
  EXPECT_EQ(def.Find("IMPLEMENT")->retry.backoff_ms, 500);
  ASSERT_EQ(test.then.kind, GraphRouting::Kind::kCases);
  ASSERT_EQ(test.then.cases.size(), 3u);
  EXPECT_EQ(test.then.cases[1].target, "COUNT_FIX");
  EXPECT_FALSE(test.then.cases[2].when.has_value());
  EXPECT_EQ(test.then.cases[2].target, "ERROR");
  EXPECT_EQ(def.Find("REPORT")->then.target, "END");
}

TEST(GraphDefTest, TheJsonFormReadsAsTheYamlDoes) {
  const GraphDef yaml = MustParse(Slurp(DataDir() + "/issue-processor.yaml"), "issue.yaml");
  const GraphDef json = MustParse(Slurp(DataDir() + "/issue-processor.json"), "issue.json");
  EXPECT_EQ(Flatten(json), Flatten(yaml));
  // A YAML flow mapping starts with "{" too and is still YAML.
  const GraphDef flow =
      MustParse("{id: f, nodes: [{name: A, type: eval, code: 'x = 1', then: END}]}", "flow.yaml");
  EXPECT_EQ(flow.entry(), "A");
}

TEST(GraphDefTest, EveryNodeTypeHasItsSeedResultKeyAndObjectDefaults) {
  const std::map<std::string, std::string> want = {{"command", "lastCommandResult"},
                                                   {"dynamic-command", "lastDynamicCommandResult"},
                                                   {"http", "lastHttpResult"},
                                                   {"eval", "lastEvalResult"},
                                                   {"agent", "lastDynamicAgentResult"},
                                                   {"dynamic-agent", "lastDynamicAgentResult"},
                                                   {"llm", "lastLLMResult"},
                                                   {"slash-command", "lastSlashCommandResult"},
                                                   {"human", "lastHumanAnswer"}};
  ASSERT_EQ(GraphNodeTypes().size(), want.size());
  for (const GraphNodeType& t : GraphNodeTypes()) {
    ASSERT_TRUE(want.count(std::string(t.name))) << t.name;
    EXPECT_EQ(t.result_key, want.at(std::string(t.name))) << t.name;
    EXPECT_TRUE(Json::parse(t.defaults).is_object()) << t.name;
    EXPECT_EQ(FindGraphNodeType(t.name), &t) << t.name;
  }
  EXPECT_EQ(FindGraphNodeType("trigger"), nullptr);
}

// Two nodes, A then B then END, with "{A}" and "{B}" standing for the rest
// of each node.
std::string TwoNodes(const std::string& a, const std::string& b) {
  return "id: t\nnodes:\n  - name: A\n" + a + "\n  - name: B\n" + b + "\n";
}
const char* const kA = "    type: command\n    command: 'true'\n    then: B";
const char* const kB = "    type: eval\n    code: 'context.x = 1'\n    then: END";

TEST(GraphDefTest, EveryNodeTypeWithItsOptionsReadsClean) {
  const std::string text = R"(id: all-types
nodes:
  - {name: C, type: command, command: ls, cwd: /tmp, env: {A: "1"}, timeoutMs: 5, then: D}
  - {name: D, type: dynamic-command, build: "return 'ls ' .. context.dir", then: H}
  - name: H
    type: http
    url: https://example.com/api
    method: POST
    headers: {Authorization: "Bearer x"}
    body: "return {issue = context.issue}"
    then: E
  - {name: E, type: eval, code: "context.n = 1", then: G}
  - {name: G, type: agent, prompt: "Do {{context.task}}", cwd: ., then: DA}
  - {name: DA, type: dynamic-agent, build: "return 'x'", agentCommand: [codex, exec], then: L}
  - {name: L, type: llm, prompt: "Sum up {{context.log}}", model: llama3, apiKeyEnv: KEY, then: S}
  - {name: S, type: slash-command, command: /review, then: Q}
  - name: Q
    type: human
    question: Ship it?
    choices: [yes, no]
    multiSelect: false
    resultKey: shipIt
    then: [{when: "state.context.shipIt == 'yes'", goto: END}, {goto: ERROR}]
)";
  const GraphDef def = MustParse(text, "all.yaml");
  ASSERT_EQ(def.nodes.size(), 9u);
  EXPECT_EQ(def.Find("H")->options["timeoutMs"], 60000);
  EXPECT_EQ(def.Find("L")->options["endpoint"], "http://127.0.0.1:11434/v1/chat/completions");
  EXPECT_EQ(def.Find("DA")->options["agentCommand"], Json({"codex", "exec"}));
  EXPECT_EQ(def.Find("Q")->result_key, "shipIt");
}

struct BadCase {
  const char* what;
  std::string text;
  std::string node;   // the problem's node
  std::string field;  // and field
  std::string says;   // a part of its message
};

TEST(GraphDefTest, EachBadDefinitionIsRefusedNamingTheFileNodeAndField) {
  const BadCase cases[] = {
      {"duplicate node",
       TwoNodes(kA, kB) + "  - name: A\n    type: eval\n    code: x = 1\n"
                          "    then: END\n",
       "A", "name", "is defined twice (nodes[0] and nodes[2])"},
      {"duplicate node with a successor of its own",
       TwoNodes(kA, kB) + "  - {name: A, type: eval, code: x = 1, then: C}\n"
                          "  - {name: C, type: eval, code: x = 1, then: END}\n",
       "A", "name", "is defined twice (nodes[0] and nodes[2])"},
      {"unknown target",
       TwoNodes("    type: command\n    command: 'true'\n    then:\n      - when: 'true'\n"
                "        goto: FIXX\n      - goto: B",
                kB),
       "A", "then[0].goto", "no node \"FIXX\" (nodes: A, B; or END, ERROR)"},
      {"unknown static target", TwoNodes(kA, "    type: eval\n    code: x = 1\n    then: AA"), "B",
       "then", "no node \"AA\""},
      {"unknown type", TwoNodes(kA, "    type: evall\n    code: x = 1\n    then: END"), "B", "type",
       "unknown node type \"evall\" (known: command, dynamic-command, http, eval, agent"},
      {"missing command", TwoNodes("    type: command\n    then: B", kB), "A", "command",
       "is required by type command"},
      {"unknown option key", TwoNodes(std::string(kA) + "\n    comand: ls", kB), "A", "comand",
       "unknown option for type command (options: command, cwd, env, timeoutMs"},
      {"default case not last",
       TwoNodes("    type: command\n    command: ls\n    then:\n      - goto: B\n"
                "      - when: 'true'\n        goto: END",
                kB),
       "A", "then[0]", "must come last"},
      {"when that is not Lua",
       TwoNodes("    type: command\n    command: ls\n    then:\n      - when: 'state.x =='\n"
                "        goto: B\n      - goto: END",
                kB),
       "A", "then[0].when",
       "is not a Lua expression: then[0].when:1: unexpected symbol near <eof>"},
      {"when that is a statement",
       TwoNodes("    type: command\n    command: ls\n    then:\n      - when: 'x = 1'\n"
                "        goto: B\n      - goto: END",
                kB),
       "A", "then[0].when", "is not a Lua expression"},
      {"when that is a list of expressions",
       TwoNodes("    type: command\n    command: ls\n    then:\n      - when: 'x, y'\n"
                "        goto: B\n      - goto: END",
                kB),
       "A", "then[0].when", "must be one Lua expression, not a list"},
      {"eval that is not Lua", TwoNodes(kA, "    type: eval\n    code: 'x = = 1'\n    then: END"),
       "B", "code", "Lua does not compile: code:1: unexpected symbol near '='"},
      {"lua routing that is not Lua",
       TwoNodes(kA, "    type: eval\n    code: x = 1\n    then: {lua: 'return if'}"), "B",
       "then.lua", "Lua does not compile: then.lua:1: unexpected symbol near 'if'"},
      {"build that is not Lua",
       TwoNodes(kA, "    type: dynamic-agent\n    build: 'return \"x\" ..'\n    then: END"), "B",
       "build", "Lua does not compile: build:1:"},
      {"unreachable node", TwoNodes("    type: command\n    command: ls\n    then: END", kB), "B",
       "", "unreachable: no route from the entry node A leads here"},
      {"END as a node name",
       TwoNodes(kA, kB) + "  - name: END\n    type: eval\n    code: x = 1\n    then: END\n", "END",
       "name", "END and ERROR are the terminal targets"},
      {"ERROR as a node name",
       "id: t\nnodes:\n  - {name: A, type: eval, code: x = 1, then: ERROR}\n"
       "  - {name: ERROR, type: eval, code: x = 1, then: END}\n",
       "ERROR", "name", "END and ERROR are the terminal targets"},
      {"a name that is not one",
       TwoNodes(kA, "    type: eval\n    code: x = 1\n    then: 9x") +
           "  - {name: 9x, type: eval, code: x = 1, then: END}\n",
       "9x", "name", "must be a letter"},
      {"env value not a string", TwoNodes(std::string(kA) + "\n    env: {A: 1}", kB), "A", "env.A",
       "must be a string (quote it: \"1\")"},
      {"retry out of range", TwoNodes(std::string(kA) + "\n    retry: {max: 101}", kB), "A",
       "retry.max", "from 0 to 100"},
      {"placeholder not a context value",
       TwoNodes(kA,
                "    type: agent\n    prompt: 'Do {{plan}}'\n"
                "    then: END"),
       "B", "prompt", "placeholder {{plan}} must name a context value"},
      {"slash command without a slash",
       TwoNodes(kA, "    type: slash-command\n    command: review\n    then: END"), "B", "command",
       "must be a slash command"},
      {"then missing", TwoNodes(kA, "    type: eval\n    code: x = 1"), "B", "then", "is required"},
      {"name missing", "id: t\nnodes:\n  - {type: eval, code: x = 1, then: END}\n", "nodes[0]",
       "name", "is required"},
      {"name not a string", "id: t\nnodes:\n  - {name: [A], type: eval, code: x = 1, then: END}\n",
       "nodes[0]", "name", "must be a string"},
      {"a node that is not a mapping",
       "id: t\nnodes:\n  - {name: A, type: eval, code: x = 1, then: "
       "END}\n  - just text\n",
       "nodes[1]", "", "must be a mapping"},
      {"unknown top-level key",
       "id: t\nnode: []\nnodes:\n  - {name: A, type: eval, code: x = 1, "
       "then: END}\n",
       "", "node", "unknown key (allowed: id, description, initialContext, nodes)"},
      {"no id", "nodes:\n  - {name: A, type: eval, code: x = 1, then: END}\n", "", "id",
       "is required"},
      {"no nodes", "id: t\nnodes: []\n", "", "nodes", "at least one node is required"},
      {"binary Lua chunk",
       R"({"id": "t", "nodes": [{"name": "A", "type": "eval", "code": "\u001bLua", "then": "END"}]})",
       "A", "code", "attempt to load a binary chunk"},
  };
  for (const BadCase& c : cases) {
    Result<GraphDef> def = ParseGraphDef(c.text, "bad.yaml");
    ASSERT_FALSE(def.ok()) << c.what << " was accepted:\n" << c.text;
    const Status& s = def.status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what;
    const Json& problems = s.details()["problems"];
    ASSERT_EQ(problems.size(), 1u) << c.what << ": " << s.message() << "\n" << c.text;
    EXPECT_EQ(problems[0]["node"], c.node) << c.what << ": " << s.message();
    EXPECT_EQ(problems[0]["field"], c.field) << c.what << ": " << s.message();
    EXPECT_NE(problems[0]["message"].get<std::string>().find(c.says), std::string::npos)
        << c.what << ": " << s.message();
    EXPECT_EQ(s.message().rfind("bad.yaml: 1 problem(s) in the graph definition\nbad.yaml: ", 0),
              0u)
        << c.what << ": " << s.message();
    const std::string where =
        (c.node.empty() ? "" : "node " + c.node + ": ") + (c.field.empty() ? "" : c.field + ": ");
    EXPECT_NE(s.message().find("\nbad.yaml: " + where + problems[0]["message"].get<std::string>()),
              std::string::npos)
        << c.what << ": " << s.message();
  }
}

TEST(GraphDefTest, AllProblemsAreReportedTogether) {
  const std::string text = R"(id: t
nodes:
  - {name: A, type: command, then: B}
  - {name: B, type: evall, then: [{when: "x ==", goto: C}, {goto: END}]}
  - {name: A, type: eval, code: "x =", then: END}
)";
  Result<GraphDef> def = ParseGraphDef(text, "many.yaml");
  ASSERT_FALSE(def.ok());
  const std::string& m = def.status().message();
  EXPECT_EQ(m.rfind("many.yaml: 6 problem(s) in the graph definition\n", 0), 0u) << m;
  for (const char* line :
       {"many.yaml: node A: command: is required", "many.yaml: node B: type: unknown node type",
        "many.yaml: node B: then[0].when: is not a Lua expression",
        "many.yaml: node B: then[0].goto: no node \"C\"",
        "many.yaml: node A: name: is defined twice",
        "many.yaml: node A (nodes[2]): code: Lua does not compile"}) {
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  }
}

TEST(GraphDefTest, OnlyTheFirstHundredProblemsAreListed) {
  std::string text = "id: t\nnodes:\n";
  for (int i = 0; i < 150; ++i) {
    text += "  - {name: N" + std::to_string(i) + ", type: command, then: END}\n";
  }
  Result<GraphDef> def = ParseGraphDef(text, "big.yaml");
  ASSERT_FALSE(def.ok());
  const Status& s = def.status();
  // 150 missing commands and 149 unreachable nodes.
  EXPECT_EQ(s.message().rfind("big.yaml: 299 problem(s) in the graph definition\n", 0), 0u);
  EXPECT_EQ(s.details()["problems"].size(), 100u);
  EXPECT_EQ(s.details()["omitted"], 199);
  EXPECT_EQ(s.message().substr(s.message().rfind('\n')), "\n... and 199 more");
}

TEST(GraphDefTest, AConditionMayEndInAComment) {
  const std::string text = TwoNodes(
      "    type: command\n    command: ls\n    then:\n"
      "      - {when: 'state.context.x == 1 -- the usual case', goto: B}\n      - goto: END",
      kB);
  EXPECT_EQ(*MustParse(text, "comment.yaml").Find("A")->then.cases[0].when,
            "state.context.x == 1 -- the usual case");
}

TEST(GraphDefTest, LuaRoutingAnywhereTurnsTheReachabilityCheckOff) {
  // B is reached only through A's Lua router, which the check cannot follow.
  const std::string text = TwoNodes(
      "    type: eval\n    code: x = 1\n    then: {lua: \"return state.context.x and 'B' or "
      "'END'\"}",
      kB);
  EXPECT_EQ(MustParse(text, "lua.yaml").Find("A")->then.kind, GraphRouting::Kind::kLua);
}

TEST(GraphDefTest, TextThatIsNotYamlOrJsonNamesTheLineAndColumn) {
  const std::pair<std::string, std::string> cases[] = {
      {"id: t\nnodes:\n  - name: A\n    then: [B\n", "bad.yaml: not valid YAML: line "},
      {"id: t\n  nodes: x\n", "bad.yaml: not valid YAML: line 2, column "},
      {"id: t\nid: u\n",
       "bad.yaml: not valid YAML: line 2, column 1: the key \"id\" appears twice"},
      {"{\"id\": \"t\",\n \"nodes\": [}\n", "bad.yaml: not valid JSON: line 2"},
  };
  for (const auto& [text, says] : cases) {
    Result<GraphDef> def = ParseGraphDef(text, "bad.yaml");
    ASSERT_FALSE(def.ok()) << text;
    EXPECT_EQ(def.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(def.status().message().rfind(says, 0), 0u) << text << "\n" << def.status().message();
  }
}

TEST(GraphDefTest, AnEmptyOrScalarDocumentIsOneProblem) {
  for (const char* text : {"", "just a string\n", "[1, 2]\n"}) {
    Result<GraphDef> def = ParseGraphDef(text, "x.yaml");
    ASSERT_FALSE(def.ok()) << text;
    EXPECT_EQ(def.status().details()["problems"].size(), 1u) << text << def.status().message();
  }
}

TEST(GraphDefTest, MermaidGolden) {
  const std::string text = R"(id: small
nodes:
  - {name: BUILD, type: command, command: make, then: TEST}
  - name: TEST
    type: command
    command: make test
    then:
      - {when: "state.context.lastCommandResult.exitCode == 0", goto: END}
      - {when: 'state.context.tries < 3 and "a|b" ~= "#"', goto: FIX}
      - {goto: ERROR}
  - {name: FIX, type: eval, code: "context.tries = (context.tries or 0) + 1", then: {lua: "return 'TEST'"}}
)";
  const std::string want = R"(flowchart TD
    start((start)) --> n0
    n0["BUILD<br/>command"]
    n1["TEST<br/>command"]
    n2["FIX<br/>eval"]
    t_end(["END"])
    t_error(["ERROR"])
    n0 --> n1
    n1 -->|"state.context.lastCommandResult.exitC..."| t_end
    n1 -->|"state.context.tries #lt; 3 and #quot;a#124;b#quot; ~= #quot;#35;#quot;"| n2
    n1 -->|else| t_error
    n2 -.->|lua| n2_next{{"?"}}
)";
  const GraphDef def = MustParse(text, "small.yaml");
  EXPECT_EQ(GraphMermaid(def), want);
  EXPECT_EQ(GraphMermaid(def), GraphMermaid(MustParse(text, "small.yaml"))) << "deterministic";
}

// The built binary: next to this test's folder when CTest did not say.
std::string Binary() {
  if (const char* bin = std::getenv("BATON_BIN")) return bin;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string guess = (self.parent_path().parent_path() / "baton").string();
  setenv("BATON_BIN", guess.c_str(), 1);
  return guess;
}

TEST(GraphCliTest, CheckAndMermaidThroughTheBinary) {
  if (!std::filesystem::exists(Binary())) GTEST_SKIP() << "no baton binary at " << Binary();
  testing::TempDir dir;
  const std::vector<std::string> store = {"--store", dir.File("baton.db")};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), store.begin(), store.end());
    return testing::RunBaton(args);
  };
  testing::ProcessResult bad = run({"graph", "check", DataDir() + "/bad-target.yaml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("bad-target.yaml: node TEST: then[1].goto: no node \"FIXX\""),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("bad-target.yaml: node FIX: unreachable"), std::string::npos) << bad.err;

  testing::ProcessResult good =
      run({"--output", "json", "graph", "check", DataDir() + "/issue-processor.yaml"});
  ASSERT_EQ(good.exit_code, 0) << good.out << good.err;
  const Json checked = Json::parse(good.out);
  EXPECT_EQ(checked["entry"], "ANALYZE");
  EXPECT_EQ(checked["nodes"].size(), 7u);
  EXPECT_EQ(checked["nodes"][3],
            Json({{"name", "TEST"}, {"type", "command"}, {"result_key", "lastCommandResult"}}));

  testing::ProcessResult mermaid =
      run({"--output", "json", "graph", "mermaid", DataDir() + "/issue-processor.json"});
  ASSERT_EQ(mermaid.exit_code, 0) << mermaid.out << mermaid.err;
  EXPECT_EQ(Json::parse(mermaid.out)["mermaid"].get<std::string>().rfind("flowchart TD\n", 0), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.File("baton.db"))) << "no store is needed";
}

}  // namespace
}  // namespace baton
