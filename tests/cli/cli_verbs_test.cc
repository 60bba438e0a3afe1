// A command line builds only the verb it names (issue 21 item 4): which
// verbs ChooseVerbs picks for the shapes people type.

#include <gtest/gtest.h>

#include "cli/verbs.h"

namespace baton {
namespace {

const std::vector<std::string> kValued = {"--store",  "--agent",      "--role",
                                          "--output", "--durability", "--root"};
const std::vector<std::string> kCommands = {"serve", "status", "log", "init"};
const std::vector<std::string> kGroups = {"run", "task", "mail"};

VerbChoice Choose(const std::vector<std::string>& args) {
  return ChooseVerbs(args, kValued, kCommands, kGroups);
}

TEST(ChooseVerbsTest, AVerbIsFoundPastTheGlobalOptions) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "add-progress", "run-1", "note"},
           {"--store", "x.db", "--agent", "coder", "run", "add-progress", "run-1"},
           {"--output=id", "run", "add-progress"},
           {"run", "--output", "id", "add-progress"},
           {"--durability", "normal", "run", "--role=human", "add-progress", "--help"}}) {
    const VerbChoice c = Choose(args);
    EXPECT_FALSE(c.all) << args.size();
    EXPECT_EQ(c.group, "run");
    EXPECT_EQ(c.verb, "add-progress");
  }
}

TEST(ChooseVerbsTest, AGroupAloneOrWithAnOptionBuildsTheWholeGroup) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"task"}, {"task", "--help"}, {"--store", "s", "task", "-h"}}) {
    const VerbChoice c = Choose(args);
    EXPECT_FALSE(c.all);
    EXPECT_EQ(c.group, "task");
    EXPECT_EQ(c.verb, "");
  }
}

TEST(ChooseVerbsTest, CommandsAndHelpBuildTheGroupsWithoutVerbs) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"--help"}, {"--version"}, {"status"}, {"--store", "s", "log", "--run", "r"}}) {
    const VerbChoice c = Choose(args);
    EXPECT_FALSE(c.all);
    EXPECT_EQ(c.group, "");
  }
}

// What the parser may read otherwise, or must suggest for, builds all.
TEST(ChooseVerbsTest, AnythingElseBuildsEverything) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"rn", "list"},                       // a typo: suggested from all
           {"completion", "bash"},               // its script lists every verb
           {"--help-all"},                       // shows every verb
           {"--root", "/a", "/b", "run", "list"},  // --root may take two
           {"--", "run", "list"}}) {
    EXPECT_TRUE(Choose(args).all) << args[0];
  }
}

}  // namespace
}  // namespace baton
