// Killing baton while it rewrites a mirror leaves the old file or the new
// one, whole — never a torn one — and the next write cleans up after it.
// Both writers: the command itself (a small mirror) and the background
// `baton flush-mirrors` it hands a large one to (docs/formats.md "Mirrors").
// Drives the real binary as separate processes (scenario).

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "ops/api.h"
#include "test_env.h"
#include "util/atomic_file.h"

extern char** environ;

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::InitStore;
using testing::RunBaton;
using testing::TempDir;

// Starts `baton args...` with "env" added; returns its pid.
pid_t Spawn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> all = {testing::BatonBin()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs(env);
  for (char** e = environ; *e != nullptr; ++e) envs.push_back(*e);
  std::vector<char*> envp;
  for (std::string& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()), 0);
  return pid;
}

int TemporariesIn(const std::string& folder) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(folder)) {
    n += e.path().filename().string().find(".baton-tmp-") != std::string::npos ? 1 : 0;
  }
  return n;
}

// The mirror must always be a whole document whose counter is one we wrote,
// beside a blob of "blob_bytes".
int64_t CounterIn(const std::string& path, size_t blob_bytes) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  Json doc = Json::parse(text.ok() ? *text : "", nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << "torn mirror: " << (text.ok() ? text->size() : 0) << " bytes";
  const Json context = doc.is_object() ? doc.value("context", Json::object()) : Json::object();
  EXPECT_TRUE(context.contains("blob") && context["blob"].is_string() &&
              context["blob"].get<std::string>().size() == blob_bytes);
  if (!context.contains("n") || !context["n"].is_number_integer()) return -1;
  return context["n"].get<int64_t>();
}

// The blob's size: 2 MB makes a large mirror, which a command hands to a
// background flush; 16 KB a small one, which it writes itself.
class MirrorKillTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override {
    store_ = InitStore(dir_.File("baton.db"));
    mirror_dir_ = dir_.File("mirror");
    fs::create_directory(mirror_dir_);
    mirror_ = mirror_dir_ + "/flow.json";
    // A big context makes each rewrite take a while.
    Json state = {{"currentNode", "BUILD"},
                  {"status", "running"},
                  {"updatedAt", "2026-01-01T00:00:00Z"},
                  {"conversationHistory", Json::array()},
                  {"context", {{"n", 0}, {"blob", std::string(GetParam(), 'x')}}}};
    ASSERT_TRUE(WriteFileAtomically(dir_.File("flow.json"), state.dump()).ok());
    auto imported = RunBaton({"--store", store_, "--output", "json", "import", "--format", "graph",
                              dir_.File("flow.json")});
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    run_ = Json::parse(imported.out)["run_id"].get<std::string>();
    auto bound = RunBaton({"--store", store_, "mirror", "bind", "--run", run_, "--format",
                           "graph", "--path", mirror_});
    ASSERT_EQ(bound.exit_code, 0) << bound.err;
    ASSERT_EQ(Counter(), 0);
  }

  int64_t Counter() { return CounterIn(mirror_, GetParam()); }

  // The processes writing the mirror now: those holding a temporary file.
  std::vector<int> Writers() {
    return testing::LiveProcessesWithFileOpen(mirror_dir_ + "/.flow.json.baton-tmp-");
  }

  std::vector<int> BackgroundFlushes() {
    return testing::LiveProcessesWithArgs({"--store=" + store_, "flush-mirrors"});
  }

  // Waits until what the last commands started has been written, and their
  // background flushes have gone (one still starting would write the next
  // commit before the test's own).
  void Flush() {
    auto flushed = RunBaton({"--store", store_, "flush-mirrors"});
    ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!BackgroundFlushes().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(BackgroundFlushes().empty());
  }

  void TearDown() override {
    for (int pid : BackgroundFlushes()) kill(pid, SIGKILL);
  }

  std::vector<std::string> Patch(int64_t n) {
    return {"--store", store_, "run", "patch-context", "--id", run_, "--patch",
            Json{{"n", n}}.dump()};
  }

  TempDir dir_;
  std::string store_, mirror_dir_, mirror_, run_;
};

TEST_P(MirrorKillTest, AKillInTheMiddleOfARewriteLeavesTheOldFileWhole) {
  // Each write holds still half done; the kill lands there every time.
  for (int64_t n = 1; n <= 3; ++n) {
    pid_t pid = Spawn(Patch(n), {"BATON_TEST_PAUSE_MID_WRITE_MS=5000"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Writers().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::vector<int> writers = Writers();
    ASSERT_EQ(writers.size(), 1u) << "the write never started";
    ASSERT_EQ(TemporariesIn(mirror_dir_), 1);
    ASSERT_EQ(kill(writers[0], SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);  // the command: killed, or returned before its flush wrote
    EXPECT_EQ(writers[0] == pid, GetParam() < size_t{kHandOffMirrorsFromBytes})
        << "who writes: the command a small mirror, a background flush a large one";
    // The commit was acknowledged before the mirror write; the file is the
    // previous one, whole.
    EXPECT_EQ(Counter(), n - 1);
    // The next write, unhindered, brings the newest state and removes what
    // the killed writer left.
    auto done = RunBaton(Patch(n));
    ASSERT_EQ(done.exit_code, 0) << done.err;
    Flush();
    EXPECT_EQ(Counter(), n);
    EXPECT_EQ(TemporariesIn(mirror_dir_), 0);
  }
}

TEST_P(MirrorKillTest, KillsAtRandomMomentsNeverTearTheFile) {
  // Kills spread over the whole of a command's life — start-up, commit,
  // render, write, rename — measured here first; with it, whoever is
  // writing the mirror at that moment (a background flush).
  const auto start = std::chrono::steady_clock::now();
  auto first = RunBaton(Patch(1));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  Flush();
  const int span_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count());
  std::mt19937 rng(20261123);
  std::uniform_int_distribution<int> delay_ms(0, std::max(span_ms, 1));
  int64_t last = 1;
  int left_behind = 0;
  for (int64_t n = 2; n <= 25; ++n) {
    pid_t pid = Spawn(Patch(n), {});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(pid, SIGKILL);
    for (int writer : Writers()) kill(writer, SIGKILL);
    waitpid(pid, nullptr, 0);
    left_behind += TemporariesIn(mirror_dir_) > 0 ? 1 : 0;
    const int64_t seen = Counter();
    // Either the old file or a newer one: never older than what was seen.
    EXPECT_GE(seen, last);
    EXPECT_LE(seen, n);
    last = std::max(last, seen);
  }
  // One clean write brings the newest state and clears what killed writers
  // left behind.
  auto done = RunBaton(Patch(100));
  ASSERT_EQ(done.exit_code, 0) << done.err;
  Flush();
  EXPECT_EQ(Counter(), 100);
  EXPECT_EQ(TemporariesIn(mirror_dir_), 0);
  std::printf("kills that left a half-written temporary file: %d of 24\n", left_behind);
}

INSTANTIATE_TEST_SUITE_P(Writers, MirrorKillTest,
                         ::testing::Values(size_t{2} << 20, size_t{16} << 10),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return info.param >= size_t{kHandOffMirrorsFromBytes}
                                      ? std::string("LargeByABackgroundFlush")
                                      : std::string("SmallByTheCommand");
                         });

}  // namespace
}  // namespace baton
