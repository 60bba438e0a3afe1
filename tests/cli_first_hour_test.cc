// Issue 17, the first hour at a terminal: what the CLI says about itself and
// whether its exit status tells a script the truth.

#include <gtest/gtest.h>

#include <fstream>

#include "baton/error_table.h"
#include "test_util.h"

namespace baton::testing {
namespace {

class CliFirstHourTest : public ::testing::Test {
 protected:
  TempDir dir_;
  const std::string store_ = dir_.File("baton.db");
};

TEST_F(CliFirstHourTest, VersionSaysTheVersionAndTheCommit) {
  ProcessResult r = RunBaton({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("baton 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
}

TEST_F(CliFirstHourTest, AGraphRunThatEndsFailedExitsWithItsOwnCode) {
  const std::string file = dir_.File("failing.yaml");
  std::ofstream(file) << "id: failing\nnodes:\n  - name: A\n    type: eval\n"
                         "    code: \"context.x = 1\"\n    then: ERROR\n";
  ProcessResult r = RunBaton({"--store", store_, "graph", "run", file, "--id", "f"});
  EXPECT_EQ(r.exit_code, kRunFailedExitCode) << r.out << r.err;
  EXPECT_NE(r.out.find("run f: failed"), std::string::npos) << r.out;
  ProcessResult again = RunBaton({"--store", store_, "graph", "resume", "f"});
  EXPECT_NE(again.exit_code, 0) << again.out << again.err;  // refused or failed: never 0

  const std::string good = dir_.File("good.yaml");
  std::ofstream(good) << "id: good\nnodes:\n  - name: A\n    type: eval\n"
                         "    code: \"context.x = 1\"\n    then: END\n";
  ProcessResult ok = RunBaton({"--store", store_, "graph", "run", good, "--id", "g"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST_F(CliFirstHourTest, ExportIntoAMissingFolderNamesTheFolderAndCreatesNothing) {
  ProcessResult created = RunBaton({"--store", store_, "--output", "json", "run", "create",
                                    "--profile", "sgai", "--title", "t"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string run = Json::parse(created.out)["id"];
  const std::string missing = dir_.File("no/such/folder/state.json");
  ProcessResult r = RunBaton({"--store", store_, "export", "--format", "sgai", "--run", run, "-o",
                              missing});
  EXPECT_EQ(r.exit_code, MappingFor(StatusCode::kNotFound).exit_code) << r.err;
  EXPECT_NE(r.err.find("no folder " + dir_.File("no/such/folder")), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Internal"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(dir_.File("no")).good());
}

TEST_F(CliFirstHourTest, LogSaysWhenItCutTheOutputAndHowToReadOn) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(RunBaton({"--store", store_, "run", "create", "--profile", "sgai"}).exit_code, 0);
  }
  ProcessResult cut = RunBaton({"--store", store_, "log", "--limit", "2"});
  EXPECT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_NE(cut.err.find("showing 2 events from seq 1; more may follow: baton log --since 2"),
            std::string::npos)
      << cut.err;
  ProcessResult all = RunBaton({"--store", store_, "log", "--limit", "10"});
  EXPECT_EQ(all.err, "");
}

}  // namespace
}  // namespace baton::testing
