// Tests for model/machine.{h,cc} and the built-in machines in
// src/model/machines/. Each built-in file is also parsed here independently
// (plain nlohmann, own "*" expansion) so that Machine::Check is compared with
// what the file says, not with itself.

#include "model/machine.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "machine_table.h"
#include "model/embedded.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::BuiltinTables;
using testing::Contains;
using testing::Edge;
using testing::ExpectedAllowed;
using testing::Table;
using testing::TableFor;

const Machine& BuiltinMachine(const std::string& name) {
  const Machine* m = MachineSet::Builtin().Find(name);
  if (m == nullptr) {
    ADD_FAILURE() << "MachineSet::Builtin() has no machine " << name;
    static const Machine kFallback = [] {
      Result<Machine> r = Machine::FromJson(
          json::parse(R"({"name":"x","states":[{"name":"a","initial":true}],"transitions":[]})"),
          "fallback");
      return std::move(r).value();
    }();
    return kFallback;
  }
  return *m;
}

// ---------------------------------------------------------------------------
// Shape of the built-in set.

struct Shape {
  std::string machine;
  std::string system;
  std::string initial;
  std::vector<std::string> states;  // in file order
  std::vector<std::string> terminal;
};

const Shape kShapes[] = {
    {"baton.run", "baton", "pending",
     {"pending", "running", "paused", "completed", "failed", "cancelled"},
     {"completed", "cancelled"}},
    {"baton.task", "baton", "ready",
     {"blocked", "ready", "in_progress", "done", "failed", "cancelled"},
     {"done", "cancelled"}},
    {"sgai.run", "sgai", "working",
     {"working", "agent-done", "complete", "waiting-for-human"},
     {"complete"}},
    {"sgai.todo", "sgai", "pending",
     {"pending", "in_progress", "completed", "cancelled"},
     {}},
    {"genie.group", "genie", "blocked",
     {"blocked", "ready", "in_progress", "done", "failed", "cancelled", "archived"},
     {"archived"}},
    {"genie.task", "genie", "ready",
     {"blocked", "ready", "in_progress", "done", "failed", "cancelled", "archived"},
     {"archived"}},
    {"genie.agent", "genie", "spawning",
     {"spawning", "working", "idle", "permission", "question", "done", "error",
      "suspended", "lost"},
     {}},
    {"genie.team", "genie", "in_progress",
     {"in_progress", "blocked", "done", "archived"},
     {}},
    {"graph.run", "graph", "pending",
     {"pending", "running", "completed", "failed", "paused"},
     {"completed"}},
    {"graph.node", "graph", "pending",
     {"pending", "running", "completed", "failed", "skipped"},
     {"completed", "skipped"}},
    {"stigmergy.project", "stigmergy", "NEEDS_BRIEFING",
     {"NEEDS_BRIEFING", "NEEDS_PLANNING", "READY_FOR_EXECUTION",
      "EXECUTION_IN_PROGRESS", "EXECUTION_HALTED", "HUMAN_INPUT_REQUIRED", "PROJECT_COMPLETE"},
     {"PROJECT_COMPLETE"}},
    {"stigmergy.epic", "stigmergy", "PENDING",
     {"PENDING", "IN_PROGRESS", "COMPLETE"},
     {"COMPLETE"}},
    {"stigmergy.story", "stigmergy", "PENDING",
     {"PENDING", "IN_PROGRESS", "AWAITING_VERIFICATION", "COMPLETE", "FAILED"},
     {"COMPLETE"}},
    {"stigmergy.issue", "stigmergy", "OPEN",
     {"OPEN", "IN_PROGRESS", "RESOLVED", "FAILED_TO_RESOLVE"},
     {"RESOLVED"}},
    {"sinfonia.workflow", "sinfonia", "created",
     {"created", "in-progress", "complete", "blocked", "failed"},
     {"complete"}},
    {"sinfonia.step", "sinfonia", "pending",
     {"pending", "in-progress", "completed", "blocked", "failed"},
     {"completed"}},
};

TEST(MachineTest, BuiltinSetIsExactlyTheDocumentedMachines) {
  std::set<std::string> expected;
  for (const Shape& s : kShapes) expected.insert(s.machine);
  std::set<std::string> loaded;
  for (const Machine* m : MachineSet::Builtin().All()) {
    loaded.insert(m->name());
    EXPECT_EQ(m->source(), "built-in " + m->name() + ".json")
        << "machine " << m->name() << " must live in <name>.json";
  }
  EXPECT_EQ(loaded, expected);
  EXPECT_EQ(BuiltinMachineFiles().size(), expected.size());
}

TEST(MachineTest, BuiltinShapesMatchTheDesign) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE("machine " + s.machine);
    const Machine& m = BuiltinMachine(s.machine);
    EXPECT_EQ(m.system(), s.system);
    EXPECT_EQ(m.initial(), s.initial);
    EXPECT_FALSE(m.description().empty());
    std::vector<std::string> names;
    std::vector<std::string> terminal;
    for (const MachineState& st : m.states()) {
      names.push_back(st.name);
      if (st.terminal) terminal.push_back(st.name);
      EXPECT_FALSE(st.description.empty()) << "state " << st.name << " has no description";
      EXPECT_EQ(m.IsTerminal(st.name), st.terminal) << st.name;
    }
    EXPECT_EQ(names, s.states);
    EXPECT_EQ(terminal, s.terminal);
    for (const MachineTransition& t : m.transitions()) {
      EXPECT_FALSE(t.note.empty()) << t.from << " -> " << t.to << " has no note";
    }
  }
}

TEST(MachineTest, IndependentParseAgreesWithLoader) {
  for (const Table& t : BuiltinTables()) {
    SCOPED_TRACE("file " + t.file);
    EXPECT_EQ(t.file, t.name + ".json");
    const Machine& m = BuiltinMachine(t.name);
    EXPECT_EQ(m.initial(), t.initial);
    ASSERT_EQ(m.transitions().size(), t.edges.size());
    for (size_t i = 0; i < t.edges.size(); ++i) {
      const MachineTransition& got = m.transitions()[i];
      const Edge& want = t.edges[i];
      EXPECT_EQ(got.from + " -> " + got.to, want.from + " -> " + want.to) << "transition " << i;
      EXPECT_EQ(got.ops, want.ops) << want.from << " -> " << want.to;
      EXPECT_EQ(got.roles, want.roles) << want.from << " -> " << want.to;
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (const Edge& e : t.edges) {
      EXPECT_TRUE(seen.insert({e.from, e.to}).second)
          << e.from << " -> " << e.to << " listed twice";
    }
  }
}

// Every state but the initial one can be reached, and every non-terminal state
// has a way out: a built-in machine has no dead ends by accident.
TEST(MachineTest, BuiltinStatesAreReachableAndNonTerminalStatesHaveExits) {
  for (const Table& t : BuiltinTables()) {
    SCOPED_TRACE("machine " + t.name);
    std::set<std::string> reached = {t.initial};
    std::vector<std::string> frontier = {t.initial};
    while (!frontier.empty()) {
      const std::string s = frontier.back();
      frontier.pop_back();
      for (const Edge& e : t.edges) {
        if (e.from == s && reached.insert(e.to).second) frontier.push_back(e.to);
      }
    }
    for (const std::string& s : t.states) {
      EXPECT_TRUE(reached.count(s)) << s << " is unreachable from " << t.initial;
      if (t.terminal.count(s)) continue;
      bool exits = false;
      for (const Edge& e : t.edges) exits = exits || (e.from == s && e.to != s);
      EXPECT_TRUE(exits) << "non-terminal " << s << " has no way out";
    }
  }
}

// The rules each built-in machine must encode, written out pair by pair
// ("from>to"), so that an edit to a machine file that adds or drops a
// transition fails here and not only in review. docs/machines.md explains
// where each rule comes from.
struct Spec {
  std::string machine;
  std::vector<std::string> pairs;
};

const Spec kSpecs[] = {
    {"baton.run",
     {"pending>running", "running>paused", "paused>running", "running>completed",
      "running>failed", "pending>cancelled", "running>cancelled", "paused>cancelled",
      "failed>running"}},
    {"baton.task",
     {"ready>blocked", "blocked>ready", "ready>in_progress", "in_progress>done",
      "in_progress>failed", "in_progress>ready", "in_progress>blocked", "failed>ready",
      "blocked>cancelled", "ready>cancelled", "in_progress>cancelled", "failed>cancelled"}},
    {"sgai.run",
     {"working>working", "working>agent-done", "agent-done>agent-done", "agent-done>working",
      "working>complete", "agent-done>complete", "working>waiting-for-human",
      "agent-done>waiting-for-human", "waiting-for-human>working"}},
    {"sgai.todo",
     {"pending>in_progress", "in_progress>pending", "pending>completed", "pending>cancelled",
      "in_progress>completed", "in_progress>cancelled", "completed>pending",
      "cancelled>pending"}},
    {"genie.group",
     {"blocked>ready", "ready>in_progress", "in_progress>done", "in_progress>ready",
      "in_progress>failed", "failed>ready", "blocked>cancelled", "ready>cancelled",
      "in_progress>cancelled", "failed>cancelled", "done>archived", "failed>archived",
      "cancelled>archived"}},
    {"genie.task",
     {"blocked>ready", "ready>blocked", "ready>in_progress", "in_progress>done",
      "in_progress>ready", "in_progress>blocked", "in_progress>failed", "failed>ready",
      "blocked>cancelled", "ready>cancelled", "in_progress>cancelled", "failed>cancelled",
      "done>archived", "failed>archived", "cancelled>archived"}},
    {"genie.agent",
     {"spawning>working", "spawning>idle", "spawning>error", "spawning>done",
      "working>idle", "working>permission", "working>question", "working>done",
      "working>error", "working>suspended", "idle>working", "idle>done", "idle>error",
      "idle>suspended", "permission>working", "permission>idle", "permission>error",
      "permission>suspended", "permission>done", "question>working", "question>idle",
      "question>error", "question>suspended", "question>done", "suspended>spawning",
      "suspended>working", "error>spawning", "done>spawning", "spawning>lost",
      "working>lost", "idle>lost", "permission>lost", "question>lost", "lost>spawning",
      "lost>working", "lost>idle", "lost>error", "lost>done", "lost>suspended"}},
    {"genie.team",
     {"in_progress>blocked", "blocked>in_progress", "in_progress>done", "blocked>done",
      "done>in_progress", "in_progress>archived", "blocked>archived", "done>archived",
      "archived>in_progress"}},
    {"graph.run",
     {"pending>running", "running>paused", "paused>running", "running>completed",
      "running>failed", "pending>failed", "paused>failed", "failed>running",
      // graph.reset only
      "running>pending", "paused>pending", "completed>pending", "failed>pending"}},
    {"graph.node",
     {"pending>running", "pending>skipped", "running>completed", "running>failed",
      "running>pending", "failed>running"}},
    {"stigmergy.project",
     {"NEEDS_BRIEFING>NEEDS_PLANNING", "NEEDS_PLANNING>READY_FOR_EXECUTION",
      "READY_FOR_EXECUTION>NEEDS_PLANNING", "READY_FOR_EXECUTION>EXECUTION_IN_PROGRESS",
      "EXECUTION_IN_PROGRESS>READY_FOR_EXECUTION", "EXECUTION_IN_PROGRESS>EXECUTION_HALTED",
      "EXECUTION_HALTED>EXECUTION_IN_PROGRESS", "EXECUTION_HALTED>NEEDS_PLANNING",
      "EXECUTION_IN_PROGRESS>PROJECT_COMPLETE",
      // Questions: any non-terminal status in and back.
      "NEEDS_BRIEFING>HUMAN_INPUT_REQUIRED", "NEEDS_PLANNING>HUMAN_INPUT_REQUIRED",
      "READY_FOR_EXECUTION>HUMAN_INPUT_REQUIRED", "EXECUTION_IN_PROGRESS>HUMAN_INPUT_REQUIRED",
      "EXECUTION_HALTED>HUMAN_INPUT_REQUIRED", "HUMAN_INPUT_REQUIRED>NEEDS_BRIEFING",
      "HUMAN_INPUT_REQUIRED>NEEDS_PLANNING", "HUMAN_INPUT_REQUIRED>READY_FOR_EXECUTION",
      "HUMAN_INPUT_REQUIRED>EXECUTION_IN_PROGRESS", "HUMAN_INPUT_REQUIRED>EXECUTION_HALTED"}},
    {"stigmergy.epic", {"PENDING>IN_PROGRESS", "IN_PROGRESS>COMPLETE"}},
    {"stigmergy.story",
     {"PENDING>IN_PROGRESS", "IN_PROGRESS>AWAITING_VERIFICATION", "IN_PROGRESS>FAILED",
      "AWAITING_VERIFICATION>COMPLETE", "AWAITING_VERIFICATION>IN_PROGRESS",
      "AWAITING_VERIFICATION>FAILED", "FAILED>IN_PROGRESS"}},
    {"stigmergy.issue",
     {"OPEN>IN_PROGRESS", "OPEN>RESOLVED", "IN_PROGRESS>RESOLVED",
      "IN_PROGRESS>FAILED_TO_RESOLVE", "FAILED_TO_RESOLVE>OPEN"}},
    // Sinfonia's transitionMap, cell by cell.
    {"sinfonia.workflow",
     {"created>created", "created>in-progress", "created>blocked", "created>failed",
      "in-progress>in-progress", "in-progress>complete", "in-progress>blocked",
      "in-progress>failed", "complete>complete", "blocked>in-progress", "blocked>blocked",
      "blocked>failed", "failed>in-progress", "failed>failed"}},
    {"sinfonia.step",
     {"pending>in-progress", "pending>blocked", "pending>completed", "in-progress>completed",
      "in-progress>blocked", "in-progress>failed", "blocked>in-progress",
      "failed>in-progress"}},
};

TEST(MachineTest, BuiltinTransitionsMatchTheSpec) {
  ASSERT_EQ(std::size(kSpecs), std::size(kShapes));
  for (const Spec& spec : kSpecs) {
    SCOPED_TRACE("machine " + spec.machine);
    const std::set<std::string> want(spec.pairs.begin(), spec.pairs.end());
    EXPECT_EQ(want.size(), spec.pairs.size()) << "the spec lists a pair twice";
    std::set<std::string> got;
    for (const Edge& e : TableFor(spec.machine).edges) got.insert(e.from + ">" + e.to);
    for (const std::string& p : want) EXPECT_TRUE(got.count(p)) << "missing " << p;
    for (const std::string& p : got) EXPECT_TRUE(want.count(p)) << "unexpected " << p;
  }
}

// ---------------------------------------------------------------------------
// (a) Every listed transition is accepted for a caller that satisfies it.

TEST(MachineTest, EveryListedTransitionIsAccepted) {
  for (const Table& t : BuiltinTables()) {
    const Machine& m = BuiltinMachine(t.name);
    for (const Edge& e : t.edges) {
      const std::string op = e.ops.empty() ? "any.op" : e.ops.front();
      const std::string role = e.roles.empty() ? "agent" : e.roles.front();
      Status s = m.Check(e.from, e.to, {op, role});
      EXPECT_TRUE(s.ok()) << t.name << ": " << e.from << " -> " << e.to
                          << " op=" << op << " role=" << role << ": " << s.ToString();
      // Every op named on the transition, and admin, may take it too.
      for (const std::string& o : e.ops) {
        EXPECT_TRUE(m.Check(e.from, e.to, {o, "admin"}).ok())
            << t.name << ": " << e.from << " -> " << e.to << " op=" << o;
      }
      for (const std::string& r : e.roles) {
        EXPECT_TRUE(m.Check(e.from, e.to, {op, r}).ok())
            << t.name << ": " << e.from << " -> " << e.to << " role=" << r;
      }
    }
  }
}

// Exhaustive: for every pair of states, Check (as admin, with the listed op)
// accepts iff the file lists the pair.
TEST(MachineTest, CheckAcceptsExactlyTheListedPairs) {
  for (const Table& t : BuiltinTables()) {
    const Machine& m = BuiltinMachine(t.name);
    for (const std::string& from : t.states) {
      for (const std::string& to : t.states) {
        const Edge* e = t.Find(from, to);
        const std::string op = (e != nullptr && !e->ops.empty()) ? e->ops.front() : "any.op";
        Status s = m.Check(from, to, {op, "admin"});
        EXPECT_EQ(s.ok(), e != nullptr)
            << t.name << ": " << from << " -> " << to << ": " << s.ToString();
        if (e == nullptr) {
          EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition)
              << t.name << ": " << from << " -> " << to << ": " << s.ToString();
        }
      }
      EXPECT_EQ(m.AllowedNext(from, {"", "admin"}), ExpectedAllowed(t, from, "", "admin"))
          << t.name << " from " << from << " (no op)";
    }
  }
}

// ---------------------------------------------------------------------------
// (b) Refused transitions.

struct Refusal {
  std::string machine;
  std::string from;
  std::string to;
  std::string op;
  std::string role;
  StatusCode code;
};

std::ostream& operator<<(std::ostream& os, const Refusal& r) {
  return os << r.machine << ": " << r.from << " -> " << r.to << " (op=" << r.op
            << ", role=" << r.role << ", want " << StatusCodeName(r.code) << ")";
}

constexpr StatusCode kNoWay = StatusCode::kFailedPrecondition;
constexpr StatusCode kBadState = StatusCode::kInvalidArgument;
constexpr StatusCode kBadRole = StatusCode::kPermissionDenied;

const Refusal kRefusals[] = {
    // baton.run
    {"baton.run", "completed", "running", "run.update", "coordinator", kNoWay},
    {"baton.run", "cancelled", "pending", "run.update", "admin", kNoWay},
    {"baton.run", "pending", "completed", "run.update", "coordinator", kNoWay},
    {"baton.run", "paused", "completed", "run.update", "coordinator", kNoWay},
    {"baton.run", "running", "done", "run.update", "coordinator", kBadState},
    {"baton.run", "nope", "running", "run.update", "coordinator", kBadState},
    // baton.task
    {"baton.task", "done", "ready", "task.update", "agent", kNoWay},
    {"baton.task", "cancelled", "ready", "task.update", "admin", kNoWay},
    {"baton.task", "ready", "done", "task.complete", "agent", kNoWay},
    {"baton.task", "blocked", "in_progress", "task.claim", "agent", kNoWay},
    {"baton.task", "failed", "in_progress", "task.claim", "agent", kNoWay},
    {"baton.task", "ready", "pending", "task.update", "agent", kBadState},
    // sgai.run
    {"sgai.run", "complete", "working", "run.update", "coordinator", kNoWay},
    {"sgai.run", "working", "complete", "sgai.apply_workflow_state", "agent", kBadRole},
    {"sgai.run", "agent-done", "complete", "sgai.apply_workflow_state", "human", kBadRole},
    {"sgai.run", "working", "complete", "run.update", "coordinator", kNoWay},
    {"sgai.run", "working", "agent-done", "run.update", "agent", kNoWay},
    {"sgai.run", "working", "waiting-for-human", "run.update", "coordinator", kNoWay},
    {"sgai.run", "waiting-for-human", "working", "run.update", "coordinator", kNoWay},
    {"sgai.run", "waiting-for-human", "agent-done", "question.answer", "admin", kNoWay},
    {"sgai.run", "waiting-for-human", "complete", "run.update", "coordinator", kNoWay},
    {"sgai.run", "working", "done", "run.update", "coordinator", kBadState},
    // sgai.todo
    {"sgai.todo", "completed", "in_progress", "todo.write", "agent", kNoWay},
    {"sgai.todo", "cancelled", "completed", "todo.write", "agent", kNoWay},
    {"sgai.todo", "pending", "pending", "todo.write", "agent", kNoWay},
    {"sgai.todo", "pending", "done", "todo.write", "agent", kBadState},
    // genie.group
    {"genie.group", "archived", "ready", "group.reset", "admin", kNoWay},
    {"genie.group", "blocked", "in_progress", "group.start", "agent", kNoWay},
    {"genie.group", "ready", "done", "group.done", "agent", kNoWay},
    {"genie.group", "ready", "blocked", "group.update", "agent", kNoWay},
    {"genie.group", "done", "ready", "group.reset", "agent", kNoWay},
    {"genie.group", "in_progress", "blocked", "group.update", "agent", kNoWay},
    {"genie.group", "in_progress", "complete", "group.done", "agent", kBadState},
    // genie.task
    {"genie.task", "archived", "ready", "task.update", "admin", kNoWay},
    {"genie.task", "blocked", "in_progress", "task.claim", "agent", kNoWay},
    {"genie.task", "done", "in_progress", "task.claim", "agent", kNoWay},
    {"genie.task", "cancelled", "ready", "task.update", "agent", kNoWay},
    {"genie.task", "ready", "paused", "task.update", "agent", kBadState},
    // genie.agent
    {"genie.agent", "error", "working", "agent.update", "agent", kNoWay},
    {"genie.agent", "done", "working", "agent.update", "agent", kNoWay},
    {"genie.agent", "spawning", "suspended", "agent.update", "agent", kNoWay},
    {"genie.agent", "suspended", "idle", "agent.update", "agent", kNoWay},
    {"genie.agent", "working", "running", "agent.update", "agent", kBadState},
    // genie.team
    {"genie.team", "archived", "done", "team.update", "coordinator", kNoWay},
    {"genie.team", "done", "blocked", "team.update", "coordinator", kNoWay},
    {"genie.team", "archived", "blocked", "team.update", "admin", kNoWay},
    {"genie.team", "blocked", "completed", "team.update", "coordinator", kBadState},
    // graph.run
    {"graph.run", "completed", "running", "run.update", "coordinator", kNoWay},
    {"graph.run", "pending", "paused", "run.pause", "human", kNoWay},
    {"graph.run", "paused", "completed", "run.update", "coordinator", kNoWay},
    {"graph.run", "failed", "completed", "run.update", "coordinator", kNoWay},
    {"graph.run", "running", "cancelled", "run.cancel", "human", kBadState},
    {"graph.run", "completed", "pending", "run.set_status", "admin", kNoWay},  // graph.reset only
    // graph.node
    {"graph.node", "completed", "running", "node.update", "agent", kNoWay},
    {"graph.node", "skipped", "pending", "node.update", "admin", kNoWay},
    {"graph.node", "pending", "completed", "node.update", "agent", kNoWay},
    {"graph.node", "failed", "skipped", "node.update", "agent", kNoWay},
    {"graph.node", "running", "cancelled", "node.update", "agent", kBadState},
    // stigmergy.project
    {"stigmergy.project", "PROJECT_COMPLETE", "EXECUTION_IN_PROGRESS", "run.update", "coordinator", kNoWay},
    {"stigmergy.project", "NEEDS_BRIEFING", "EXECUTION_IN_PROGRESS", "run.update", "coordinator", kNoWay},
    {"stigmergy.project", "NEEDS_PLANNING", "EXECUTION_IN_PROGRESS", "run.update", "coordinator", kNoWay},
    {"stigmergy.project", "EXECUTION_HALTED", "PROJECT_COMPLETE", "run.update", "coordinator", kNoWay},
    {"stigmergy.project", "NEEDS_PLANNING", "needs_planning", "run.update", "coordinator", kBadState},
    {"stigmergy.project", "NEEDS_PLANNING", "HUMAN_INPUT_REQUIRED", "run.update", "coordinator", kNoWay},
    // stigmergy.epic
    {"stigmergy.epic", "COMPLETE", "IN_PROGRESS", "task.update", "agent", kNoWay},
    {"stigmergy.epic", "PENDING", "COMPLETE", "task.update", "agent", kNoWay},
    {"stigmergy.epic", "IN_PROGRESS", "PENDING", "task.update", "agent", kNoWay},
    {"stigmergy.epic", "IN_PROGRESS", "DONE", "task.update", "agent", kBadState},
    // stigmergy.story
    {"stigmergy.story", "COMPLETE", "IN_PROGRESS", "task.update", "agent", kNoWay},
    {"stigmergy.story", "PENDING", "COMPLETE", "task.update", "agent", kNoWay},
    {"stigmergy.story", "FAILED", "COMPLETE", "task.update", "agent", kNoWay},
    {"stigmergy.story", "IN_PROGRESS", "COMPLETE", "task.update", "agent", kNoWay},
    {"stigmergy.story", "IN_PROGRESS", "done", "task.update", "agent", kBadState},
    // stigmergy.issue
    {"stigmergy.issue", "RESOLVED", "OPEN", "task.update", "agent", kNoWay},
    {"stigmergy.issue", "OPEN", "FAILED_TO_RESOLVE", "task.update", "agent", kNoWay},
    {"stigmergy.issue", "FAILED_TO_RESOLVE", "RESOLVED", "task.update", "agent", kNoWay},
    {"stigmergy.issue", "OPEN", "CLOSED", "task.update", "agent", kBadState},
    // sinfonia.workflow
    {"sinfonia.workflow", "complete", "in-progress", "run.update", "coordinator", kNoWay},
    {"sinfonia.workflow", "created", "complete", "run.update", "coordinator", kNoWay},
    {"sinfonia.workflow", "blocked", "complete", "run.update", "coordinator", kNoWay},
    {"sinfonia.workflow", "failed", "blocked", "run.update", "coordinator", kNoWay},
    {"sinfonia.workflow", "in-progress", "created", "run.update", "coordinator", kNoWay},
    {"sinfonia.workflow", "in-progress", "completed", "run.update", "coordinator", kBadState},
    // sinfonia.step
    {"sinfonia.step", "completed", "in-progress", "task.update", "agent", kNoWay},
    {"sinfonia.step", "failed", "completed", "task.update", "agent", kNoWay},
    {"sinfonia.step", "blocked", "completed", "task.update", "agent", kNoWay},
    {"sinfonia.step", "in-progress", "pending", "task.update", "agent", kNoWay},
    {"sinfonia.step", "in-progress", "complete", "task.update", "agent", kBadState},
};

// The part of a refusal message that lists the allowed next states.
std::string AllowedPart(const std::string& message) {
  const size_t at = message.find("allowed next states");
  return at == std::string::npos ? "" : message.substr(at);
}

TEST(MachineTest, RefusedTransitionsNameStatesAndAllowedNext) {
  for (const Refusal& r : kRefusals) {
    SCOPED_TRACE(::testing::Message() << r);
    const Machine& m = BuiltinMachine(r.machine);
    const Table& t = TableFor(r.machine);
    Status s = m.Check(r.from, r.to, {r.op, r.role});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), r.code) << s.ToString();

    const std::vector<std::string> allowed =
        Contains(t.states, r.from) ? ExpectedAllowed(t, r.from, r.op, r.role)
                                   : std::vector<std::string>{};
    const std::string& msg = s.message();
    EXPECT_NE(msg.find(r.machine), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"" + r.from + "\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"" + r.to + "\""), std::string::npos) << msg;
    const std::string part = AllowedPart(msg);
    ASSERT_FALSE(part.empty()) << msg;
    for (const std::string& a : allowed) {
      EXPECT_NE(part.find(a), std::string::npos) << "allowed " << a << " missing: " << msg;
    }
    if (allowed.empty()) {
      EXPECT_NE(part.find("none"), std::string::npos) << msg;
    }

    const json& d = s.details();
    ASSERT_TRUE(d.is_object()) << d.dump();
    EXPECT_EQ(d.value("machine", ""), r.machine);
    EXPECT_EQ(d.value("current", ""), r.from);
    EXPECT_EQ(d.value("requested", ""), r.to);
    ASSERT_TRUE(d.contains("allowed") && d["allowed"].is_array()) << d.dump();
    EXPECT_EQ(d["allowed"].get<std::vector<std::string>>(), allowed) << d.dump();
  }
}

TEST(MachineTest, EveryMachineHasRefusalCases) {
  for (const Shape& shape : kShapes) {
    int total = 0;
    bool terminal_case = false;
    bool unknown_case = false;
    for (const Refusal& r : kRefusals) {
      if (r.machine != shape.machine) continue;
      ++total;
      terminal_case = terminal_case || Contains(shape.terminal, r.from);
      unknown_case = unknown_case || (r.code == kBadState && !Contains(shape.states, r.to));
    }
    EXPECT_GE(total, 3) << shape.machine;
    EXPECT_TRUE(unknown_case) << shape.machine << " has no unknown-target case";
    if (!shape.terminal.empty()) {
      EXPECT_TRUE(terminal_case) << shape.machine << " has no case from a terminal state";
    }
  }
}

TEST(MachineTest, SinfoniaCompleteIsTerminal) {
  const Machine& m = BuiltinMachine("sinfonia.workflow");
  EXPECT_TRUE(m.IsTerminal("complete"));
  // Sinfonia's table keeps complete -> complete and nothing else.
  EXPECT_EQ(m.AllowedNext("complete", {"", "admin"}), std::vector<std::string>{"complete"});
  EXPECT_TRUE(m.Check("complete", "complete", {"", "agent"}).ok());
  // Sinfonia's own test: created -> in-progress -> complete -> in-progress.
  EXPECT_TRUE(m.Check("created", "in-progress", {"", "agent"}).ok());
  EXPECT_TRUE(m.Check("in-progress", "complete", {"", "agent"}).ok());
  EXPECT_EQ(m.Check("complete", "in-progress", {"", "admin"}).code(),
            StatusCode::kFailedPrecondition);
  // failed -> in-progress is the retry.
  EXPECT_TRUE(m.Check("failed", "in-progress", {"", "agent"}).ok());
}

TEST(MachineTest, SgaiOnlyCoordinatorCompletes) {
  const Machine& m = BuiltinMachine("sgai.run");
  struct Case {
    std::string role;
    bool ok;
  };
  for (const Case& c : {Case{"coordinator", true}, Case{"admin", true},
                        Case{"agent", false}, Case{"human", false}}) {
    for (const std::string from : {"working", "agent-done"}) {
      Status s = m.Check(from, "complete", {"sgai.apply_workflow_state", c.role});
      EXPECT_EQ(s.ok(), c.ok) << from << " -> complete as " << c.role << ": " << s.ToString();
      if (!c.ok) {
        EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << c.role;
        EXPECT_NE(s.message().find(c.role), std::string::npos) << s.message();
        // The agent's own choices do not include complete.
        EXPECT_FALSE(Contains(s.details()["allowed"].get<std::vector<std::string>>(), "complete"));
      }
    }
  }
}

TEST(MachineTest, SgaiOnlyAskEntersWaitingForHuman) {
  const Machine& m = BuiltinMachine("sgai.run");
  EXPECT_TRUE(m.Check("working", "waiting-for-human", {"question.ask", "coordinator"}).ok());
  EXPECT_TRUE(m.Check("agent-done", "waiting-for-human", {"question.ask", "coordinator"}).ok());
  Status s = m.Check("working", "waiting-for-human", {"run.update", "admin"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("question.ask"), std::string::npos) << s.message();
  for (const std::string op : {"question.answer", "question.cancel"}) {
    EXPECT_TRUE(m.Check("waiting-for-human", "working", {op, "human"}).ok()) << op;
  }
  // A plain status update while waiting is refused here; the sgai profile
  // ignores it instead (sgai's "status preserved").
  EXPECT_FALSE(m.Check("waiting-for-human", "working", {"run.update", "coordinator"}).ok());
}

TEST(MachineTest, TerminalStatesHaveNoExitsExceptListedSelfLoops) {
  for (const Table& t : BuiltinTables()) {
    const Machine& m = BuiltinMachine(t.name);
    for (const std::string& s : t.terminal) {
      for (const std::string& next : m.AllowedNext(s, {"", "admin"})) {
        EXPECT_EQ(next, s) << t.name << ": terminal " << s << " leads to " << next;
      }
    }
  }
}

TEST(MachineTest, RefusalFromTerminalStateSaysSo) {
  const Machine& m = BuiltinMachine("baton.run");
  Status s = m.Check("completed", "running", {"", "admin"});
  EXPECT_NE(s.message().find("terminal"), std::string::npos) << s.message();
}

// ---------------------------------------------------------------------------
// Machine::FromJson errors name the field.

json ValidDoc() {
  return json::parse(R"({
    "name": "review",
    "system": "user",
    "description": "a review loop",
    "states": [
      {"name": "draft", "initial": true},
      {"name": "review"},
      {"name": "merged", "terminal": true}
    ],
    "transitions": [
      {"from": "draft", "to": "review"},
      {"from": "review", "to": ["draft", "merged"], "roles": ["human"]}
    ]
  })");
}

struct BadDoc {
  std::string label;
  std::string patch;  // a JSON merge patch applied to ValidDoc()
  std::string replace_json_pointer;
  std::string replacement;  // JSON; used with replace_json_pointer
  std::vector<std::string> want;  // substrings of the message
};

json Apply(const BadDoc& c) {
  json doc = ValidDoc();
  if (!c.patch.empty()) doc.merge_patch(json::parse(c.patch));
  if (!c.replace_json_pointer.empty()) {
    doc[json::json_pointer(c.replace_json_pointer)] = json::parse(c.replacement);
  }
  return doc;
}

const BadDoc kBadDocs[] = {
    {"unknown target state", "", "/transitions/1/to", R"(["draft", "dne"])",
     {"transitions[1].to", "unknown state \"dne\""}},
    {"unknown source state", "", "/transitions/0/from", R"("nowhere")",
     {"transitions[0].from", "unknown state \"nowhere\""}},
    {"duplicate state", "", "/states/2", R"({"name": "draft"})",
     {"states[2].name", "duplicate state \"draft\""}},
    {"two initial states", "", "/states/1", R"({"name": "review", "initial": true})",
     {"states[1].initial", "second initial", "\"draft\""}},
    {"no initial state", "", "/states/0", R"({"name": "draft"})",
     {"states", "initial"}},
    {"unknown top-level key", R"({"colour": "blue"})", "", "",
     {"colour", "unknown field"}},
    {"unknown state key", "", "/states/0/final", "true",
     {"states[0].final", "unknown field"}},
    {"unknown transition key", "", "/transitions/1/guard", R"("x")",
     {"transitions[1].guard", "unknown field"}},
    {"bad role", "", "/transitions/1/roles", R"(["human", "reviewer"])",
     {"transitions[1].roles", "unknown role \"reviewer\""}},
    {"missing name", R"({"name": null})", "", "", {"name", "required"}},
    {"name not a string", R"({"name": 7})", "", "", {"name", "must be a string"}},
    {"empty states", R"({"states": []})", "", "", {"states", "non-empty"}},
    {"transition listed twice", "", "/transitions/0/to", R"(["review", "review"])",
     {"transitions[0]", "draft -> review", "twice"}},
    {"initial not a bool", "", "/states/0/initial", R"("yes")",
     {"states[0].initial", "true or false"}},
    {"ops not strings", "", "/transitions/0/ops", "[1]", {"transitions[0].ops[0]", "string"}},
    {"missing to", "", "/transitions/0/to", "[]", {"transitions[0].to", "required"}},
};

TEST(MachineTest, FromJsonErrorsNameTheField) {
  for (const BadDoc& c : kBadDocs) {
    const json doc = Apply(c);
    Result<Machine> m = Machine::FromJson(doc, "machines/review.json");
    ASSERT_FALSE(m.ok()) << c.label << ": " << doc.dump();
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << c.label;
    const std::string& msg = m.status().message();
    EXPECT_EQ(msg.rfind("machines/review.json: ", 0), 0u) << c.label << ": " << msg;
    for (const std::string& w : c.want) {
      EXPECT_NE(msg.find(w), std::string::npos)
          << c.label << ": want \"" << w << "\" in: " << msg;
    }
  }
}

TEST(MachineTest, FromJsonRefusesNonObject) {
  Result<Machine> m = Machine::FromJson(json::array(), "x.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("x.json"), std::string::npos);
}

TEST(MachineTest, StarExpandsToNonTerminalStates) {
  json doc = ValidDoc();
  doc["transitions"].push_back({{"from", "*"}, {"to", "merged"}, {"ops", {"admin.close"}}});
  // review -> merged is already listed, so drop it from the earlier entry.
  doc["transitions"][1]["to"] = "draft";
  Result<Machine> m = Machine::FromJson(doc, "star");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->Check("draft", "merged", {"admin.close", "agent"}).ok());
  EXPECT_TRUE(m->Check("review", "merged", {"admin.close", "agent"}).ok());
  // "*" does not include the terminal state itself.
  Status s = m->Check("merged", "merged", {"admin.close", "admin"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  // The op limit holds.
  s = m->Check("draft", "merged", {"other.op", "admin"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(m->AllowedNext("draft", {"other.op", "agent"}), std::vector<std::string>{"review"});
}

TEST(MachineTest, StarCollidingWithExplicitTransitionIsAnError) {
  json doc = ValidDoc();
  doc["transitions"].push_back({{"from", "*"}, {"to", "merged"}});
  Result<Machine> m = Machine::FromJson(doc, "star");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("review -> merged"), std::string::npos)
      << m.status().message();
}

TEST(MachineTest, RoleLimitAndAdmin) {
  Result<Machine> m = Machine::FromJson(ValidDoc(), "roles");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->Check("review", "merged", {"", "human"}).ok());
  EXPECT_TRUE(m->Check("review", "merged", {"", "admin"}).ok());
  Status s = m->Check("review", "merged", {"", "agent"});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.details()["allowed"], json::array());
}

TEST(MachineTest, ToJsonRoundTrips) {
  for (const Machine* m : MachineSet::Builtin().All()) {
    Result<Machine> again = Machine::FromJson(m->ToJson(), "round trip");
    ASSERT_TRUE(again.ok()) << m->name() << ": " << again.status().ToString();
    EXPECT_EQ(again->ToJson(), m->ToJson()) << m->name();
  }
}

TEST(MachineTest, ToMermaidIsAStateDiagram) {
  for (const Machine* m : MachineSet::Builtin().All()) {
    const std::string mermaid = m->ToMermaid();
    EXPECT_NE(mermaid.find("stateDiagram-v2"), std::string::npos) << m->name();
    EXPECT_NE(mermaid.find("title: " + m->name()), std::string::npos) << m->name();
  }
  const std::string sgai = BuiltinMachine("sgai.run").ToMermaid();
  // States are numbered in file order (working, agent-done, complete,
  // waiting-for-human); labels keep the real names.
  EXPECT_NE(sgai.find("[*] --> s0"), std::string::npos) << sgai;
  EXPECT_NE(sgai.find("state \"waiting-for-human\" as s3"), std::string::npos) << sgai;
  EXPECT_NE(sgai.find("s2 --> [*]"), std::string::npos) << sgai;
  EXPECT_NE(sgai.find("s3 --> s0"), std::string::npos) << sgai;
  EXPECT_NE(sgai.find("question.ask"), std::string::npos) << sgai;
}

// Regression: mangled ids merged "in-progress" and "in_progress" into one
// Mermaid state.
TEST(MachineTest, ToMermaidKeepsSimilarNamesApart) {
  Result<Machine> m = Machine::FromJson(
      nlohmann::json::parse(R"({"name": "t", "states": [{"name": "in-progress", "initial": true},
                                 {"name": "in_progress"}],
                                 "transitions": [{"from": "in-progress", "to": "in_progress"}]})"),
      "test");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::string mermaid = m->ToMermaid();
  EXPECT_NE(mermaid.find("s0 --> s1"), std::string::npos) << mermaid;
}

TEST(MachineTest, ToTextListsStatesAndTransitions) {
  const std::string text = BuiltinMachine("graph.node").ToText();
  EXPECT_NE(text.find("graph.node"), std::string::npos) << text;
  EXPECT_NE(text.find("pending (initial)"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped (terminal)"), std::string::npos) << text;
  EXPECT_NE(text.find("running -> pending"), std::string::npos) << text;
}

// ---------------------------------------------------------------------------
// MachineSet: built-ins, lookup, user files.

TEST(MachineTest, GetUnknownMachineIsNotFoundNamingMachines) {
  Result<const Machine*> m = MachineSet::Builtin().Get("nope.run");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("nope.run"), std::string::npos);
  EXPECT_NE(m.status().message().find("sgai.run"), std::string::npos);
  EXPECT_EQ(MachineSet::Builtin().Find("nope.run"), nullptr);
  ASSERT_TRUE(MachineSet::Builtin().Get("sgai.run").ok());
}

// A fresh folder under the system temp folder, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("baton_machine_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

TEST(MachineTest, LoadMissingFolderGivesBuiltins) {
  Result<std::shared_ptr<const MachineSet>> set =
      MachineSet::Load("/nonexistent/baton/machines");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ((*set)->All().size(), MachineSet::Builtin().All().size());
}

TEST(MachineTest, LoadAddsValidUserMachine) {
  TempDir dir;
  const std::string path = dir.Write("review.json", ValidDoc().dump(2));
  dir.Write("notes.txt", "not a machine");
  Result<std::shared_ptr<const MachineSet>> set = MachineSet::Load(dir.path().string());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const Machine* review = (*set)->Find("review");
  ASSERT_NE(review, nullptr);
  EXPECT_EQ(review->source(), path);
  EXPECT_EQ(review->initial(), "draft");
  EXPECT_TRUE(review->Check("draft", "review", {"", "agent"}).ok());
  EXPECT_NE((*set)->Find("sgai.run"), nullptr);
  EXPECT_EQ((*set)->All().size(), MachineSet::Builtin().All().size() + 1);
  // The shared built-in set is untouched.
  EXPECT_EQ(MachineSet::Builtin().Find("review"), nullptr);
}

TEST(MachineTest, LoadInvalidUserMachineNamesFileAndField) {
  TempDir dir;
  json doc = ValidDoc();
  doc["transitions"][1]["to"] = json::array({"draft", "dne"});
  const std::string path = dir.Write("review.json", doc.dump(2));
  Result<std::shared_ptr<const MachineSet>> set = MachineSet::Load(dir.path().string());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  const std::string& msg = set.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("transitions[1].to"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dne"), std::string::npos) << msg;
}

TEST(MachineTest, LoadUnparsableUserFileNamesFile) {
  TempDir dir;
  const std::string path = dir.Write("broken.json", "{\"name\": ");
  Result<std::shared_ptr<const MachineSet>> set = MachineSet::Load(dir.path().string());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(set.status().message().find(path), std::string::npos) << set.status().message();
}

TEST(MachineTest, LoadRefusesBuiltinName) {
  TempDir dir;
  json doc = ValidDoc();
  doc["name"] = "sgai.run";
  const std::string path = dir.Write("sgai.json", doc.dump(2));
  Result<std::shared_ptr<const MachineSet>> set = MachineSet::Load(dir.path().string());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  const std::string& msg = set.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("name"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sgai.run"), std::string::npos) << msg;
  EXPECT_NE(msg.find("already defined"), std::string::npos) << msg;
}

TEST(MachineTest, LoadRefusesTwoUserFilesWithOneName) {
  TempDir dir;
  dir.Write("a.json", ValidDoc().dump());
  const std::string second = dir.Write("b.json", ValidDoc().dump());
  Result<std::shared_ptr<const MachineSet>> set = MachineSet::Load(dir.path().string());
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find(second), std::string::npos) << set.status().message();
}

}  // namespace
}  // namespace baton
