// Many processes claiming from one store file: every ready task is claimed
// exactly once and no caller ever sees an error (Genie's agents lost work
// to check-then-act races; baton's claim is one conditional write inside a
// write transaction).

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "test_util.h"

namespace baton {
namespace {

using testing::MustCall;

constexpr int kProcesses = 16;
constexpr int kTasks = 1000;

// The body of one claiming process: claims until nothing is left, writing
// each claimed id to "out"; exits 1 (after writing the error) on any error.
[[noreturn]] void ClaimUntilEmpty(const std::string& store, int index, const std::string& out) {
  std::ofstream file(out);
  ApiOptions options;
  options.store.location = store;
  Result<std::unique_ptr<Api>> api = Api::Open(options);
  const Actor me{"worker-" + std::to_string(index), "agent"};
  int status = 0;
  while (api.ok()) {
    Result<Json> claim = (*api)->Call("task.claim", Json::object(), me);
    if (!claim.ok()) {
      file << "ERROR " << claim.status().ToString() << "\n";
      status = 1;
      break;
    }
    if (!(*claim)["claimed"].get<bool>()) break;
    file << (*claim)["task"]["id"].get<std::string>() << "\n";
  }
  if (!api.ok()) {
    file << "ERROR " << api.status().ToString() << "\n";
    status = 1;
  }
  file.close();
  _exit(status);
}

TEST(ClaimRaceTest, SixteenProcessesClaimEveryTaskExactlyOnce) {
  testing::TempDir dir;
  const std::string store = testing::TestStoreLocation(dir.File("baton.db"));
  {
    std::unique_ptr<Api> api = testing::OpenApi(store, /*group_commit=*/true);
    for (int i = 0; i < kProcesses; ++i) {
      const std::string id = "worker-" + std::to_string(i);
      MustCall(*api, "agent.register", {{"id", id}}, testing::Agent(id));
    }
    std::vector<std::thread> creators;
    for (int t = 0; t < 4; ++t) {
      creators.emplace_back([&, t] {
        for (int i = t; i < kTasks; i += 4) {
          MustCall(*api, "task.create", {{"title", "t" + std::to_string(i)}, {"position", i}});
        }
      });
    }
    for (std::thread& t : creators) t.join();
  }  // the parent's connections close before forking

  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ClaimUntilEmpty(store, i, dir.File("claims-" + std::to_string(i)));
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a claimer failed";
  }

  std::map<std::string, int> owner;  // task id -> claiming process
  int claimers_with_work = 0;
  for (int i = 0; i < kProcesses; ++i) {
    std::ifstream file(dir.File("claims-" + std::to_string(i)));
    std::string line;
    int mine = 0;
    while (std::getline(file, line)) {
      ASSERT_NE(line.rfind("ERROR", 0), 0u) << "process " << i << ": " << line;
      auto [it, inserted] = owner.emplace(line, i);
      EXPECT_TRUE(inserted) << line << " claimed by processes " << it->second << " and " << i;
      ++mine;
    }
    if (mine > 0) ++claimers_with_work;
  }
  EXPECT_EQ(owner.size(), static_cast<size_t>(kTasks));
  EXPECT_GT(claimers_with_work, 1) << "the processes did not race at all";

  // The store agrees: every task in progress, leased by the process that
  // reported it, at epoch 1.
  std::unique_ptr<Api> api = testing::OpenApi(store);
  Json tasks = MustCall(*api, "task.list", {{"limit", kTasks + 1}});
  ASSERT_EQ(tasks["tasks"].size(), static_cast<size_t>(kTasks));
  for (const Json& t : tasks["tasks"]) {
    const std::string id = t["id"].get<std::string>();
    ASSERT_EQ(t["status"], "in_progress") << id;
    EXPECT_EQ(t["lease"]["owner"], "worker-" + std::to_string(owner[id])) << id;
    EXPECT_EQ(t["lease"]["epoch"], 1) << id;
  }
  EXPECT_EQ(MustCall(*api, "ledger.verify", Json::object())["ok"], true);
}

}  // namespace
}  // namespace baton
