// sgai's GOAL.md and flow DAG: every GOAL file in the shared fixtures (front
// matter, flow, models, body checksum), then the DOT syntax, the flow rules
// (entries, injected coordinator edges, cycles) and the runner's next-agent
// rule, each case named after what it checks.

#include "model/sgai_flow.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "util/json_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using Edges = std::vector<std::pair<std::string, std::string>>;
using Names = std::vector<std::string>;

fs::path SgaiFixtures() {
  fs::path shared;
  if (const char* dir = std::getenv("BATON_SHARED_DIR"); dir && *dir) {
    shared = dir;
  } else {
    shared = fs::path(BATON_SOURCE_DIR) / ".." / "shared";
  }
  return shared / "fixtures" / "seeds" / "sgai";
}

std::string MustRead(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

GoalDocument MustParseGoal(std::string_view text) {
  Result<GoalDocument> doc = ParseGoalMarkdown(text);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString() << "\n" << text;
  return doc.ok() ? *std::move(doc) : GoalDocument();
}

SgaiFlow MustFlow(std::string_view dot) {
  Result<SgaiFlow> flow = SgaiFlow::FromDot(dot);
  EXPECT_TRUE(flow.ok()) << flow.status().ToString() << "\n" << dot;
  return flow.ok() ? *std::move(flow) : SgaiFlow();
}

std::string FlowError(std::string_view dot) {
  Result<SgaiFlow> flow = SgaiFlow::FromDot(dot);
  EXPECT_FALSE(flow.ok()) << "accepted:\n" << dot;
  if (flow.ok()) return "";
  EXPECT_EQ(flow.status().code(), StatusCode::kInvalidArgument) << dot;
  return flow.status().message();
}

std::string GoalError(std::string_view text) {
  Result<GoalDocument> doc = ParseGoalMarkdown(text);
  EXPECT_FALSE(doc.ok()) << "accepted:\n" << text;
  if (doc.ok()) return "";
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument) << text;
  return doc.status().message();
}

Edges FromCoordinator(const Names& entries) {
  Edges out;
  for (const std::string& e : entries) out.emplace_back("coordinator", e);
  return out;
}

Edges Concat(Edges a, const Edges& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Every GOAL file shipped as a fixture, with what its front matter and flow
// must give. Checksums were computed with `tail -n +<closing line + 1> FILE |
// sha256sum`, independently of the code under test.
struct GoalFixture {
  std::string file;
  std::string checksum;
  size_t body_bytes;
  Names agents;
  Edges declared;
  Names entries;
  std::string pcc_models;  // models["project-critic-council"] as JSON, or ""
  std::string interactive;
  std::string gate;
};

const Edges kBackendEdges = {{"backend-go-developer", "go-readability-reviewer"},
                             {"backend-go-developer", "stpa-analyst"},
                             {"go-readability-reviewer", "stpa-analyst"},
                             {"general-purpose", "stpa-analyst"}};

std::vector<GoalFixture> GoalFixtures() {
  return {
      {"GOAL.example.md",
       "dadcfa59f4d525783cee682194ae8382653401bef05e12ed80d63b33bfd46991",
       189,
       {"coordinator", "go", "react", "general-purpose", "skill-writer", "stpa-analyst"},
       {},
       {"general-purpose", "go", "react", "skill-writer", "stpa-analyst"},
       "",
       "",
       ""},
      {"GOALS/2026_02_02_adhoc_oneshot_support.md",
       "4ce733e0f7cbdadc73a1f645533324226c07a1d7f01aebd7a3bc0f369b8b9263",
       3578,
       {"coordinator", "backend-go-developer", "go-readability-reviewer", "stpa-analyst",
        "general-purpose", "htmx-picocss-frontend-developer", "htmx-picocss-frontend-reviewer",
        "project-critic-council", "skill-writer"},
       Concat(kBackendEdges, {{"htmx-picocss-frontend-developer", "htmx-picocss-frontend-reviewer"},
                              {"htmx-picocss-frontend-reviewer", "stpa-analyst"}}),
       {"backend-go-developer", "general-purpose", "htmx-picocss-frontend-developer",
        "project-critic-council", "skill-writer"},
       R"(["opencode/kimi-k2.5-free","opencode/minimax-m2.1-free","opencode/glm-4.7-free"])",
       "yes",
       "make test"},
      {"GOALS/2026_02_16_continuous_mode.md",
       "124d11c6625a53425a144eb6747f448575398d2652be2dd50d6265f23dddd476",
       3163,
       {"coordinator", "backend-go-developer", "go-readability-reviewer", "stpa-analyst",
        "general-purpose", "react-developer", "react-reviewer", "project-critic-council",
        "skill-writer"},
       Concat(kBackendEdges,
              {{"react-developer", "react-reviewer"}, {"react-reviewer", "stpa-analyst"}}),
       {"backend-go-developer", "general-purpose", "project-critic-council", "react-developer",
        "skill-writer"},
       R"(["anthropic/claude-opus-4-6"])",
       "",
       "make test"},
      {"GOALS/2026_02_16_rewrite_readme_md.md",
       "6fd4d1f48c451d55192ea10f3f3de36e3a48e1b9d6d5528d979d8b008762e3f9",
       6749,
       {"coordinator", "general-purpose", "project-critic-council"},
       {},
       {"general-purpose", "project-critic-council"},
       R"j(["anthropic/claude-opus-4-6","anthropic/claude-opus-4-6 (max)"])j",
       "yes",
       ""},
  };
}

TEST(SgaiGoal, EveryFixtureParses) {
  for (const GoalFixture& want : GoalFixtures()) {
    SCOPED_TRACE(want.file);
    std::string text = MustRead(SgaiFixtures() / want.file);
    GoalDocument doc = MustParseGoal(text);
    EXPECT_EQ(doc.body_checksum, want.checksum);
    EXPECT_EQ(doc.body.size(), want.body_bytes);
    EXPECT_EQ(text.substr(text.size() - doc.body.size()), doc.body) << "body is not the tail";

    const Json& fm = doc.front_matter;
    ASSERT_TRUE(fm.contains("flow") && fm["flow"].is_string()) << fm.dump(2);
    ASSERT_TRUE(fm.contains("models") && fm["models"].is_object()) << fm.dump(2);
    EXPECT_TRUE(fm["models"]["coordinator"].is_string()) << fm.dump(2);
    for (const std::string& agent : want.agents) {
      EXPECT_TRUE(fm["models"].contains(agent)) << agent << " has no model";
    }
    if (!want.pcc_models.empty()) {
      EXPECT_EQ(fm["models"]["project-critic-council"], Json::parse(want.pcc_models));
    }
    EXPECT_EQ(fm.value("interactive", ""), want.interactive);
    EXPECT_EQ(fm.value("completionGateScript", ""), want.gate);

    SgaiFlow flow = MustFlow(fm["flow"].get<std::string>());
    EXPECT_EQ(flow.agents(), want.agents);
    EXPECT_EQ(flow.Entries(), want.entries);
    EXPECT_EQ(flow.edges(), Concat(want.declared, FromCoordinator(want.entries)));
  }
}

TEST(SgaiGoal, ExampleKeepsCommentedAliasAsNullAndModelVariants) {
  GoalDocument doc = MustParseGoal(MustRead(SgaiFixtures() / "GOAL.example.md"));
  EXPECT_TRUE(doc.front_matter["alias"].is_null()) << doc.front_matter.dump(2);
  EXPECT_EQ(doc.front_matter["models"]["skill-writer"], "openai/gpt-5.5 (xhigh)");
  EXPECT_FALSE(doc.front_matter["models"].contains("go-lite"));
  EXPECT_TRUE(doc.body.rfind("\n# Title of your Goal\n", 0) == 0) << doc.body;
}

TEST(SgaiGoal, ChecksumCoversTheBodyOnly) {
  std::string body = "# Goal\n\n- [ ] ship it\n";
  GoalDocument a = MustParseGoal("---\nflow: |\n  \"a\"\n---\n" + body);
  GoalDocument b = MustParseGoal("---\nflow: |\n  \"b\"\nmodels: {}\n---\n" + body);
  GoalDocument c = MustParseGoal("---\nflow: |\n  \"a\"\n---\n" + body + "- [ ] more\n");
  EXPECT_EQ(a.body, body);
  EXPECT_EQ(a.body_checksum, b.body_checksum);
  EXPECT_NE(a.body_checksum, c.body_checksum);
  // sha256("# Goal\n\n- [ ] ship it\n"), computed with sha256sum.
  EXPECT_EQ(a.body_checksum, "66acfd27c980b4ad34811dc2cf1f7f60fa06af5eb7ff1a204fc96b7ab6ced17b");
}

TEST(SgaiGoal, WithoutFrontMatterAllIsBody) {
  std::string text = "# Goal\n---\nnot: front matter\n---\n";
  GoalDocument doc = MustParseGoal(text);
  EXPECT_EQ(doc.body, text);
  EXPECT_EQ(doc.front_matter, Json::object());
}

TEST(SgaiGoal, ClosingDelimiterIsAWholeLine) {
  // "  a --- b" and "----" do not close; sgai's later splitter is line-based.
  GoalDocument doc = MustParseGoal("---\nflow: |\n  a --- b\n  ----\n---\nbody\n");
  EXPECT_EQ(doc.front_matter["flow"], "a --- b\n----\n");
  EXPECT_EQ(doc.body, "body\n");
}

TEST(SgaiGoal, CrlfAndEmptyFrontMatter) {
  GoalDocument crlf = MustParseGoal("---\r\nflow: x\r\n---\r\nbody\r\n");
  EXPECT_EQ(crlf.front_matter, Json({{"flow", "x"}}));
  EXPECT_EQ(crlf.body, "body\r\n");
  GoalDocument empty = MustParseGoal("---\n---\nbody");
  EXPECT_EQ(empty.front_matter, Json::object());
  EXPECT_EQ(empty.body, "body");
  EXPECT_EQ(MustParseGoal("---\n---").body, "");
}

TEST(SgaiGoal, ScalarsFollowYamlCoreSchema) {
  GoalDocument doc = MustParseGoal(
      "---\ninteractive: yes\nretrospective: false\ncount: 3\nratio: 0.5\nquoted: \"true\"\n"
      "nothing:\nlist: [x, 'y', 2]\nversion: 1.2.3\n---\n");
  Json want = {{"interactive", "yes"},  {"retrospective", false}, {"count", 3},
               {"ratio", 0.5},          {"quoted", "true"},       {"nothing", nullptr},
               {"list", {"x", "y", 2}}, {"version", "1.2.3"}};
  EXPECT_EQ(doc.front_matter, want) << doc.front_matter.dump(2);
}

TEST(SgaiGoal, FrontMatterErrorsNameTheLine) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"---\nflow: x\n", "GOAL.md: line 1: the front matter opened by \"---\" is never closed"},
      {"---flow: x\n---\n", "GOAL.md: line 1: the opening \"---\" must be alone on its line"},
      {"---\n---x\nbody\n", "GOAL.md: line 2: the closing \"---\" must end its line"},
      {"---\n- a\n- b\n---\n", "GOAL.md: line 2: front matter is not a mapping"},
      {"---\nflow: a\nmodels: {}\nflow: b\n---\n",
       "GOAL.md: line 4: front matter repeats the key \"flow\""},
      {"---\nflow: a\nmodels: [x\n---\n",
       "GOAL.md: line 4, column 1: front matter is not valid YAML"},
      {"---\nflow: a\n  models: b\n---\n",
       "GOAL.md: line 3, column 9: front matter is not valid YAML"},
  };
  for (const Case& c : cases) {
    std::string got = GoalError(c.text);
    EXPECT_EQ(got.substr(0, c.want.size()), c.want) << c.text << "\ngot: " << got;
  }
}

TEST(SgaiFlow, WholeDigraphWithEverySyntax) {
  SgaiFlow flow = MustFlow(R"(/* header */
strict digraph factory {
  graph [rankdir=LR]; node [shape=box]
  edge [color=red, style=dashed]
  rankdir=LR
# a preprocessor-style line
  planner -> "coder" -> reviewer [label="review"]; // trailing
  subgraph cluster_qa { tester; "doc writer" }
  reviewer -> { tester "doc writer" }
  port:n:ne -> planner
  "say \"hi\"" -> 42
  planner -> "coder"
}
)");
  EXPECT_EQ(flow.agents(), (Names{"coordinator", "planner", "coder", "reviewer", "tester",
                                  "doc writer", "port", "say \"hi\"", "42"}));
  EXPECT_EQ(flow.Entries(), (Names{"port", "say \"hi\""}));
  Edges declared = {{"planner", "coder"},       {"coder", "reviewer"}, {"reviewer", "tester"},
                    {"reviewer", "doc writer"}, {"port", "planner"},   {"say \"hi\"", "42"}};
  EXPECT_EQ(flow.edges(), Concat(declared, FromCoordinator(flow.Entries())));
  EXPECT_EQ(flow.Successors("reviewer"), (Names{"tester", "doc writer"}));
  EXPECT_TRUE(flow.IsTerminal("tester"));
  EXPECT_FALSE(flow.IsTerminal("planner"));
  EXPECT_FALSE(flow.IsTerminal("nobody"));
  EXPECT_TRUE(flow.HasAgent("doc writer"));
  EXPECT_FALSE(flow.HasAgent("doc"));
}

TEST(SgaiFlow, StatementsMayStartWithGraphAttributes) {
  SgaiFlow flow = MustFlow("graph [rankdir=LR]\n\"a\" -> \"b\"\n");
  EXPECT_EQ(flow.edges(), (Edges{{"a", "b"}, {"coordinator", "a"}}));
}

TEST(SgaiFlow, EmptyFlowIsCoordinatorToGeneralPurpose) {
  SgaiFlow flow = MustFlow("");
  EXPECT_EQ(flow.agents(), (Names{"coordinator", "general-purpose"}));
  EXPECT_EQ(flow.edges(), (Edges{{"coordinator", "general-purpose"}}));
  EXPECT_TRUE(flow.Entries().empty());
}

TEST(SgaiFlow, CoordinatorNamedInTheFlow) {
  // Coordinator the only entry: nothing injected (sgai's early return).
  SgaiFlow only = MustFlow("\"coordinator\" -> \"a\"\n\"a\" -> \"b\"\n");
  EXPECT_EQ(only.edges(), (Edges{{"coordinator", "a"}, {"a", "b"}}));
  EXPECT_TRUE(only.Entries().empty());
  // Another entry beside coordinator gets its injected edge.
  SgaiFlow two = MustFlow("\"coordinator\" -> \"a\"\n\"b\"\n");
  EXPECT_EQ(two.Entries(), (Names{"b"}));
  EXPECT_EQ(two.edges(), (Edges{{"coordinator", "a"}, {"coordinator", "b"}}));
  // Coordinator with a predecessor: the injected edge closes a cycle.
  EXPECT_EQ(FlowError("\"a\" -> \"coordinator\""), "flow: cycle: coordinator -> a -> coordinator");
}

TEST(SgaiFlow, CycleIsRefusedAndNamed) {
  struct Case {
    std::string dot, want;
  } cases[] = {
      {"\"a\" -> \"b\"\n\"b\" -> \"c\"\n\"c\" -> \"a\"\n", "flow: cycle: a -> b -> c -> a"},
      {"\"x\" -> \"a\" -> \"b\" -> \"a\"", "flow: cycle: a -> b -> a"},
      {"a -> a", "flow: cycle: a -> a"},
      {"digraph { a -> { b c } c -> a }", "flow: cycle: a -> c -> a"},
  };
  for (const Case& c : cases) EXPECT_EQ(FlowError(c.dot), c.want) << c.dot;
}

TEST(SgaiFlow, SyntaxErrorsNameLineAndColumn) {
  struct Case {
    std::string dot, want;
  } cases[] = {
      {"\"a\" -> ", "flow: line 1, column 8: expected an agent id, found the end of the flow"},
      {"\"a\"\n\"b\" -> -> \"c\"", "flow: line 2, column 8: expected an agent id, found '->'"},
      {"general-purpose -> a",
       "flow: line 1, column 8: unexpected '-' (quote ids that contain '-', e.g. "
       "\"general-purpose\")"},
      {"\"a\" -> \"b", "flow: line 1, column 8: unterminated quoted id"},
      {"a\n  /* open", "flow: line 2, column 3: unterminated /* comment"},
      {"digraph G { a -> b", "flow: line 1, column 19: expected '}', found the end of the flow"},
      {"a -- b", "flow: line 1, column 3: undirected edge '--' in a digraph"},
      {"graph G { a -- b }", "flow: line 1, column 1: undirected \"graph\"; a flow is a digraph"},
      {"a }", "flow: line 1, column 3: unexpected '}'"},
      {"node", "flow: line 1, column 5: expected '[', found the end of the flow"},
      {"a [label=]", "flow: line 1, column 10: expected a value, found ']'"},
      {"a:", "flow: line 1, column 3: expected a port, found the end of the flow"},
      {"a [=b]", "flow: line 1, column 4: expected an attribute, found '='"},
      {"strict a", "flow: line 1, column 8: expected \"digraph\" after \"strict\""},
      {"digraph { a -> subgraph }", "flow: line 1, column 25: expected '{', found '}'"},
      {"@flows/main.dot", "flow: line 1, column 1: an \"@file\" flow must be read by the caller"},
      {"a -> b $", "flow: line 1, column 8: unexpected character '$'"},
      {"digraph G { a } extra", "flow: line 1, column 17: text after the closing '}'"},
      {"\"\" -> a", "flow: line 1, column 1: an agent id may not be empty"},
      {"\n\n  // only a comment\n", "flow: no agents"},
  };
  for (const Case& c : cases) EXPECT_EQ(FlowError(c.dot), c.want) << c.dot;
}

TEST(SgaiFlow, JsonRoundTrip) {
  std::vector<std::string> dots = {"", "\"coordinator\" -> \"a\"\n\"b\"\n",
                                   "digraph { a -> b -> c; d -> c }"};
  for (const GoalFixture& f : GoalFixtures()) {
    GoalDocument doc = MustParseGoal(MustRead(SgaiFixtures() / f.file));
    dots.push_back(doc.front_matter["flow"].get<std::string>());
  }
  for (const std::string& dot : dots) {
    SgaiFlow flow = MustFlow(dot);
    Json j = flow.ToJson();
    EXPECT_EQ(j["agents"], Json(flow.agents())) << dot;
    EXPECT_EQ(j["entries"], Json(flow.Entries())) << dot;
    ASSERT_EQ(j["edges"].size(), flow.edges().size()) << dot;
    Result<SgaiFlow> back = SgaiFlow::FromJson(j);
    ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << j.dump();
    EXPECT_EQ(back->agents(), flow.agents()) << dot;
    EXPECT_EQ(back->edges(), flow.edges()) << dot;
    EXPECT_EQ(back->Entries(), flow.Entries()) << dot;
    EXPECT_EQ(back->ToJson(), j) << dot;
  }
}

TEST(SgaiFlow, FromJsonRefusesMalformedInput) {
  struct Case {
    std::string json, want;
  } cases[] = {
      {R"([])", "sgai flow: must be an object"},
      {R"({"agents":["coordinator"],"edges":[]})", "sgai flow: entries: must be an array"},
      {R"({"agents":["a"],"edges":[],"entries":[]})", "sgai flow: agents: must start with"},
      {R"({"agents":["coordinator","a","a"],"edges":[],"entries":[]})",
       "sgai flow: agents: must start with"},
      {R"({"agents":["coordinator",1],"edges":[],"entries":[]})",
       "sgai flow: agents[1]: must be a non-empty string"},
      {R"({"agents":["coordinator"],"edges":[["coordinator","x"]],"entries":[]})",
       "sgai flow: edges[0]: must be [from, to], naming two agents"},
      {R"({"agents":["coordinator","a"],"edges":[["a"]],"entries":[]})",
       "sgai flow: edges[0]: must be [from, to], naming two agents"},
      {R"({"agents":["coordinator","a"],"edges":[["a","a"]],"entries":[]})",
       "sgai flow: edges: cycle: a -> a"},
      {R"({"agents":["coordinator","a"],"edges":[],"entries":["b"]})",
       "sgai flow: entries[0]: \"b\" is not an agent"},
      {R"({"agents":["coordinator"],"edges":[],"entries":[],"extra":1})",
       "sgai flow: extra: unknown field"},
  };
  for (const Case& c : cases) {
    Result<SgaiFlow> flow = SgaiFlow::FromJson(Json::parse(c.json));
    ASSERT_FALSE(flow.ok()) << c.json;
    EXPECT_EQ(flow.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_EQ(flow.status().message().substr(0, c.want.size()), c.want)
        << c.json << "\ngot: " << flow.status().message();
  }
}

// The flow of GOALS/2026_02_02_adhoc_oneshot_support.md.
SgaiFlow AdhocFlow() {
  GoalDocument doc =
      MustParseGoal(MustRead(SgaiFixtures() / "GOALS/2026_02_02_adhoc_oneshot_support.md"));
  return MustFlow(doc.front_matter["flow"].get<std::string>());
}

void ExpectNext(const SgaiFlow& flow, std::string_view current, std::string_view unread,
                std::string_view agent, std::string_view reason) {
  NextAgent next = PickNextAgent(flow, current, unread);
  EXPECT_EQ(next.agent, agent) << "current " << current << ", unread " << unread;
  EXPECT_EQ(next.reason, reason) << "current " << current << ", unread " << unread;
}

TEST(PickNextAgent, UnreadMessageRecipientWins) {
  SgaiFlow flow = AdhocFlow();
  // Over every other rule: a terminal, the coordinator, a middle node.
  ExpectNext(flow, "stpa-analyst", "go-readability-reviewer", "go-readability-reviewer",
             "unread_message");
  ExpectNext(flow, "coordinator", "skill-writer", "skill-writer", "unread_message");
  ExpectNext(flow, "backend-go-developer", "coordinator", "coordinator", "unread_message");
  // A multi-model id "agent:model" names the agent (extractAgentFromModelID).
  ExpectNext(flow, "coordinator", "project-critic-council:opencode/glm-4.7-free",
             "project-critic-council", "unread_message");
}

TEST(PickNextAgent, TerminalHandsToCoordinator) {
  SgaiFlow flow = AdhocFlow();
  ExpectNext(flow, "stpa-analyst", "", "coordinator", "terminal_to_coordinator");
  ExpectNext(flow, "project-critic-council", "", "coordinator", "terminal_to_coordinator");
  // A flow of coordinator alone: coordinator is terminal.
  ExpectNext(MustFlow("\"coordinator\""), "coordinator", "", "coordinator",
             "terminal_to_coordinator");
}

// The coordinator hands to the first entry of the flow, by name.
TEST(PickNextAgent, CoordinatorHandsToFirstEntry) {
  SgaiFlow flow = AdhocFlow();
  ASSERT_EQ(flow.Entries().front(), "backend-go-developer");
  ExpectNext(flow, "coordinator", "", "backend-go-developer", "coordinator_to_entry");
}

// A flow that starts at the coordinator (or the default flow) leaves it by
// the coordinator's own successor.
TEST(PickNextAgent, CoordinatorNamedInTheFlowHandsToItsSuccessor) {
  ExpectNext(MustFlow(""), "coordinator", "", "general-purpose", "dag_successor");
  ExpectNext(MustFlow("\"coordinator\" -> \"a\"\n\"a\" -> \"b\""), "coordinator", "", "a",
             "dag_successor");
}

// A non-terminal agent hands to its first successor in the flow.
TEST(PickNextAgent, DagSuccessor) {
  SgaiFlow flow = AdhocFlow();
  ExpectNext(flow, "backend-go-developer", "", "go-readability-reviewer", "dag_successor");
  ExpectNext(flow, "go-readability-reviewer", "", "stpa-analyst", "dag_successor");
  ExpectNext(flow, "htmx-picocss-frontend-developer", "", "htmx-picocss-frontend-reviewer",
             "dag_successor");
  ExpectNext(flow, "not-in-the-flow", "", "coordinator", "unknown_agent_to_coordinator");
}

}  // namespace
}  // namespace baton
