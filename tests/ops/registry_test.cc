// The registry adds each family of operations when one of its groups is
// first asked for (issue 21 item 4: a command builds what it runs), and the
// families say truly which groups they define.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "ops/api.h"
#include "ops/registry.h"
#include "ops/schemas.h"

namespace baton {
namespace {

int g_alpha_added = 0;
int g_alpha_more_added = 0;
int g_beta_added = 0;

Status AddOne(Registry& r, const std::string& name) {
  return r.Add({.name = name,
                .summary = name,
                .input_schema = {{"type", "object"}},
                .output_schema = {{"type", "object"}},
                .handler = [](OpContext&, const Json&) -> Result<Json> { return Json::object(); },
                .uses_store = false});
}

Status AddAlpha(Registry& r) {
  ++g_alpha_added;
  RETURN_IF_ERROR(AddOne(r, "alpha.one"));
  return AddOne(r, "alpha.two");
}

Status AddAlphaMore(Registry& r) {
  ++g_alpha_more_added;
  return AddOne(r, "alpha.three");
}

Status AddBeta(Registry& r) {
  ++g_beta_added;
  return AddOne(r, "beta.one");
}

Status AddBroken(Registry& r) {
  return r.Add({.name = "broken.one",
                .summary = "a schema that does not check",
                .input_schema = {{"type", "no-such-type"}},
                .output_schema = {{"type", "object"}},
                .handler = [](OpContext&, const Json&) -> Result<Json> { return Json::object(); }});
}

TEST(RegistryTest, AFamilyIsAddedWhenOneOfItsGroupsIsFirstAskedFor) {
  g_alpha_added = g_beta_added = 0;
  Registry r;
  r.AddFamily({{"alpha"}, AddAlpha});
  r.AddFamily({{"beta"}, AddBeta});
  EXPECT_EQ(r.Groups(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(g_alpha_added + g_beta_added, 0) << "Groups() added a family";
  ASSERT_NE(r.Find("alpha.two"), nullptr);
  EXPECT_EQ(r.Find("alpha.three"), nullptr);
  EXPECT_EQ(r.InGroup("alpha").size(), 2u);
  EXPECT_EQ(g_alpha_added, 1);
  EXPECT_EQ(g_beta_added, 0) << "asking for alpha built beta";
  EXPECT_EQ(r.All().size(), 3u);
  EXPECT_EQ(g_beta_added, 1);
  EXPECT_TRUE(r.Complete().ok());
  EXPECT_EQ(g_alpha_added, 1) << "a family was added twice";
}

// A group in two families: a name the first defines builds only the first.
TEST(RegistryTest, FindStopsAtTheFamilyThatDefinesTheName) {
  g_alpha_added = g_alpha_more_added = 0;
  Registry r;
  r.AddFamily({{"alpha"}, AddAlpha});
  r.AddFamily({{"alpha"}, AddAlphaMore});
  ASSERT_NE(r.Find("alpha.one"), nullptr);
  EXPECT_EQ(g_alpha_added, 1);
  EXPECT_EQ(g_alpha_more_added, 0);
  ASSERT_NE(r.Find("alpha.three"), nullptr);
  EXPECT_EQ(g_alpha_more_added, 1);
  // A name no family defines builds the whole group, then answers none.
  Registry other;
  other.AddFamily({{"alpha"}, AddAlpha});
  other.AddFamily({{"alpha"}, AddAlphaMore});
  EXPECT_EQ(other.Find("alpha.four"), nullptr);
  EXPECT_EQ(other.InGroup("alpha").size(), 3u);
}

TEST(RegistryTest, AFamilyThatDoesNotCheckIsSaidByComplete) {
  Registry r;
  r.AddFamily({{"broken"}, AddBroken});
  EXPECT_EQ(r.Find("broken.one"), nullptr);
  const Status built = r.Complete();
  EXPECT_EQ(built.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(built.message().find("operation broken.one: input schema"), std::string::npos)
      << built.message();
}

// Each family adds operations of the groups it names, and of each group it
// names at least one: the CLI and Find rely on the table to build a group.
TEST(RegistryTest, FamiliesNameTheirGroups) {
  std::set<std::string> all;
  for (const OpFamily& family : CoreFamilies()) {
    Registry alone;
    ASSERT_TRUE(family.add(alone).ok());
    std::set<std::string> seen;
    for (const Operation* op : alone.All()) {
      const std::string group = op->name.substr(0, op->name.find('.'));
      EXPECT_NE(std::find(family.groups.begin(), family.groups.end(), group), family.groups.end())
          << op->name << " is added by a family that does not name group " << group;
      seen.insert(group);
      all.insert(op->name);
    }
    for (const std::string& group : family.groups) {
      EXPECT_TRUE(seen.contains(group)) << "a family names group " << group << " but adds none";
    }
  }
  Registry core;
  ASSERT_TRUE(RegisterCoreOps(core).ok());
  ASSERT_TRUE(core.Complete().ok());
  EXPECT_EQ(core.All().size(), all.size());
  EXPECT_GT(all.size(), 100u);
}

// Hooks are there before any family: a task completed through a registry
// that built only task.* still advances a board's card.
TEST(RegistryTest, HooksAreAddedBeforeAnyFamily) {
  Registry r;
  ASSERT_TRUE(RegisterCoreOps(r).ok());
  EXPECT_FALSE(r.hooks().task_succeeded.empty());
  EXPECT_FALSE(r.hooks().question_answered.empty());
}

// Api::MayRegisterOnFirstCall checks a caller's id against schema::Id
// rather than build agent.* for it: the rule agent.register's id is.
TEST(RegistryTest, AgentRegisterTakesTheIdsOfSchemaId) {
  Registry r;
  ASSERT_TRUE(RegisterCoreOps(r).ok());
  const Operation* reg = r.Find("agent.register");
  ASSERT_NE(reg, nullptr);
  const Json& id = reg->input_schema["properties"]["id"];
  const Json rule = schema::Id("agent id");
  EXPECT_EQ(id["type"], rule["type"]);
  EXPECT_EQ(id["pattern"], rule["pattern"]);
}

// Many threads asking for different groups of one registry at once each
// get their operations (run under the sanitizers' build as well).
TEST(RegistryTest, ThreadsAskingAtOnceEachFindTheirs) {
  Registry r;
  ASSERT_TRUE(RegisterCoreOps(r).ok());
  const std::vector<std::string> names = {"run.show",     "task.claim",  "mail.send",
                                          "sgai.start",   "board.create", "graph.run",
                                          "ledger.verify", "token.create"};
  std::vector<std::thread> threads;
  std::atomic<int> missing{0};
  for (const std::string& name : names) {
    threads.emplace_back([&r, &missing, name] {
      for (int i = 0; i < 50; ++i) {
        if (r.Find(name) == nullptr) ++missing;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(missing.load(), 0);
}

}  // namespace
}  // namespace baton
