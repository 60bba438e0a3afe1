// Property test for issue 19: seeded random walks over every built-in machine.
//
// Each step asks Machine::Check about a move to a random state — any state of
// the machine, not only the allowed ones — for a random caller (an operation
// and a role), and compares the answer with what the machine's file says. The
// file is read here with plain nlohmann from the embedded text, never through
// Machine::FromJson, so that Check is compared with the table and not with
// itself. An allowed move is taken; a refused one leaves the walk in place.
//
// A failure names BATON_SEED, the walk and the path walked; setting
// BATON_SEED to the printed value replays the same walks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "machine_table.h"
#include "model/embedded.h"
#include "model/machine.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::BuiltinTables;
using testing::Contains;
using testing::Edge;
using testing::Table;

constexpr int kWalksPerMachine = 200;
constexpr int kStepsPerWalk = 50;
// Named by no transition of any built-in machine: the caller most moves see.
constexpr char kUnlistedOp[] = "run.set_status";
const char* const kRoles[] = {"coordinator", "agent", "human", "admin"};

uint32_t BaseSeed() {
  const char* env = std::getenv("BATON_SEED");
  return env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 19;
}

// Every op some transition of "t" is reserved to, and one none names.
std::vector<std::string> OpsOf(const Table& t) {
  std::vector<std::string> ops = {kUnlistedOp};
  for (const Edge& e : t.edges) {
    for (const std::string& op : e.ops) {
      if (!Contains(ops, op)) ops.push_back(op);
    }
  }
  return ops;
}

// What the file says about "from" -> "to" for this caller, as the code Check
// must return. The order is docs/machines.md's: the op before the role, and
// admin passes every role limit but no op limit.
StatusCode FileVerdict(const Table& t, const std::string& from, const std::string& to,
                       const std::string& op, const std::string& role) {
  for (const Edge& e : t.edges) {
    if (e.from != from || e.to != to) continue;
    if (!e.ops.empty() && !Contains(e.ops, op)) return StatusCode::kFailedPrecondition;
    if (!e.roles.empty() && role != "admin" && !Contains(e.roles, role)) {
      return StatusCode::kPermissionDenied;
    }
    return StatusCode::kOk;
  }
  return StatusCode::kFailedPrecondition;
}

// The states the file lets this caller reach from "from", in file order.
std::vector<std::string> FileAllowedNext(const Table& t, const std::string& from,
                                         const std::string& op, const std::string& role) {
  std::vector<std::string> out;
  for (const Edge& e : t.edges) {
    if (e.from == from && !Contains(out, e.to) &&
        FileVerdict(t, from, e.to, op, role) == StatusCode::kOk) {
      out.push_back(e.to);
    }
  }
  return out;
}

// What the walks of one machine saw, so that a walk that never moves (or
// never meets a refusal) cannot pass for a test.
struct Coverage {
  std::set<std::string> visited;
  int moves = 0;
  int refusals = 0;
};

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
}

// One walk from the initial state; stops at the first disagreement.
void WalkAgreesWithTheFile(const Machine& m, const Table& t, uint32_t seed, Coverage* seen) {
  std::mt19937 rng(seed);
  const std::vector<std::string> roles(std::begin(kRoles), std::end(kRoles));
  const std::vector<std::string> ops = OpsOf(t);
  std::string at = t.initial;
  std::string path = at;
  ASSERT_EQ(m.initial(), at) << "the machine starts elsewhere than its file says";
  seen->visited.insert(at);
  for (int step = 0; step < kStepsPerWalk; ++step) {
    const std::string& to = Pick(rng, t.states);
    const std::string& op = Pick(rng, ops);
    const std::string& role = Pick(rng, roles);
    const Status got = m.Check(at, to, {op, role});
    const StatusCode want = FileVerdict(t, at, to, op, role);
    ASSERT_EQ(StatusCodeName(got.code()), StatusCodeName(want))
        << "step " << step << ": " << at << " -> " << to << " as op " << op << ", role " << role
        << "\n  Check says: " << got.ToString() << "\n  path walked: " << path;
    ASSERT_EQ(m.AllowedNext(at, {op, role}), FileAllowedNext(t, at, op, role))
        << "step " << step << ": allowed next from " << at << " as op " << op << ", role " << role
        << "\n  path walked: " << path;
    if (!got.ok()) {
      ++seen->refusals;
      continue;
    }
    ++seen->moves;
    at = to;
    path += " -> " + at;
    seen->visited.insert(at);
  }
}

TEST(MachineWalkTest, RandomWalksAgreeWithEveryMachinesTable) {
  const uint32_t base = BaseSeed();
  const std::vector<Table>& tables = BuiltinTables();
  ASSERT_EQ(tables.size(), MachineSet::Builtin().All().size());
  for (const Table& t : tables) {
    const Machine* m = MachineSet::Builtin().Find(t.name);
    ASSERT_NE(m, nullptr) << "no built-in machine for file " << t.name;
    Coverage seen;
    for (int walk = 0; walk < kWalksPerMachine; ++walk) {
      SCOPED_TRACE(::testing::Message()
                   << "machine " << t.name << ", BATON_SEED=" << base << ", walk " << walk);
      WalkAgreesWithTheFile(*m, t, base + static_cast<uint32_t>(walk), &seen);
      if (HasFailure()) return;  // one replayable failure, not thousands
    }
    // Every state is reachable (machine_test checks it); walks that missed
    // one, or never moved, or were never refused, tested too little.
    EXPECT_EQ(seen.visited, std::set<std::string>(t.states.begin(), t.states.end()))
        << t.name << ": the walks did not visit every state";
    EXPECT_GT(seen.moves, 0) << t.name;
    EXPECT_GT(seen.refusals, 0) << t.name;
  }
}

// A terminal state the file gives no way out of refuses every move, whoever
// asks: each target, each op some transition names, each role.
TEST(MachineWalkTest, TerminalStatesWithoutListedExitsRefuseEveryMove) {
  int checked = 0;
  for (const Table& t : BuiltinTables()) {
    const Machine& m = *MachineSet::Builtin().Find(t.name);
    for (const std::string& terminal : t.terminal) {
      bool listed_exit = false;
      for (const Edge& e : t.edges) listed_exit = listed_exit || e.from == terminal;
      if (listed_exit) continue;
      ++checked;
      for (const std::string& op : OpsOf(t)) {
        for (const char* role : kRoles) {
          for (const std::string& to : t.states) {
            EXPECT_FALSE(m.Check(terminal, to, {op, role}).ok())
                << t.name << ": terminal " << terminal << " -> " << to << " as op " << op
                << ", role " << role;
          }
          EXPECT_EQ(m.AllowedNext(terminal, {op, role}), std::vector<std::string>{})
              << t.name << ": terminal " << terminal << " as op " << op << ", role " << role;
        }
      }
    }
  }
  EXPECT_GT(checked, 0) << "no built-in terminal state without exits: nothing was checked";
}

}  // namespace
}  // namespace baton
