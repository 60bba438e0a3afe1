#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "test_env.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/json_util.h"
#include "util/sha256.h"
#include "util/subprocess.h"

namespace baton {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(JsonUtilTest, CanonicalJsonSortsKeysAndIsStable) {
  Json a = Json::parse(R"({"b": 1, "a": [true, null, "x"], "c": {"z": 1.5, "y": -2}})");
  EXPECT_EQ(CanonicalJson(a), R"({"a":[true,null,"x"],"b":1,"c":{"y":-2,"z":1.5}})");
  EXPECT_EQ(CanonicalJson(Json::parse(CanonicalJson(a))), CanonicalJson(a));
}

TEST(JsonUtilTest, ParseErrorsNameSourceLineAndColumn) {
  Result<Json> r = ParseJson("{\n  \"a\": 1,\n  oops\n}", "in.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("in.json"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("line 3"), std::string::npos) << r.status().message();
}

TEST(JsonUtilTest, DeepNestingIsRefusedNotAStackOverflow) {
  for (const std::string& deep : {std::string(100000, '['),
                                  std::string(100000, '[') + std::string(100000, ']')}) {
    Result<Json> r = ParseJson(deep, "deep");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("nesting"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ParseJson(std::string(200, '[') + std::string(200, ']'), "ok").ok());
}

TEST(ClockTest, FormatsRfc3339Utc) {
  EXPECT_EQ(FormatTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTime(1795311499123), "2026-11-22T01:38:19.123Z");
  EXPECT_NE(NewId("run"), NewId("run"));
  EXPECT_EQ(NewId("run").size(), 16u);
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

TEST(JsonUtilTest, AppendJsonStringMatchesNlohmannDump) {
  const std::string cases[] = {"", "plain", "quote \" and \\ back", "tab\tnew\nline\r",
                               std::string("nul\0byte", 8), "\x01\x1f\x7f", "ünïcödé ✓"};
  for (const std::string& c : cases) {
    std::string mine;
    AppendJsonString(c, &mine);
    EXPECT_EQ(mine, Json(c).dump()) << c;
  }
  // Every ASCII byte, escapes first, last and side by side, appended after
  // text already there.
  std::string all;
  for (int b = 0; b < 128; ++b) all.push_back(static_cast<char>(b));
  for (const std::string& c : {all, all + "\"\"", "\n\n" + all, std::string("x\\\"y")}) {
    std::string mine = "before";
    AppendJsonString(c, &mine);
    EXPECT_EQ(mine, "before" + Json(c).dump());
  }
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

Result<SubprocessResult> Sh(const std::string& script, int64_t timeout_ms = 10000,
                            std::string stdin_text = "") {
  return RunSubprocess({.argv = {"/bin/sh", "-c", script},
                        .stdin_text = std::move(stdin_text),
                        .timeout_ms = timeout_ms});
}

TEST(SubprocessTest, CapturesExitCodeStdoutAndStderr) {
  Result<SubprocessResult> r = Sh("echo out; echo err >&2; exit 3");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(SubprocessTest, LooksUpArgv0OnPathAndRunsNoShell) {
  Result<SubprocessResult> r = RunSubprocess({.argv = {"echo", "$HOME", "a b"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "$HOME a b\n");
}

TEST(SubprocessTest, GivesStdinAndTheEnvironment) {
  Result<SubprocessResult> r = RunSubprocess(
      {.argv = {"/bin/sh", "-c", "cat; printf '|%s' \"$ONLY\"; printf '|%s' \"$HOME\""},
       .env = {"ONLY=this"},
       .stdin_text = "line one\nline two"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "line one\nline two|this|");
  // Without "env" it is ours.
  ::setenv("BATON_SUBPROCESS_TEST", "inherited", 1);
  r = Sh("printf %s \"$BATON_SUBPROCESS_TEST\"; cat", 10000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "inherited");  // and empty stdin is /dev/null
}

TEST(SubprocessTest, ChildIgnoringALargeStdinDoesNotBlock) {
  const std::string big(1 << 20, 'x');
  const int64_t start = NowMillis();
  Result<SubprocessResult> r = Sh("exit 0", 5000, big);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_LT(NowMillis() - start, 4000);
  r = Sh("wc -c", 5000, big);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::stoll(r->out), 1 << 20);
}

TEST(SubprocessTest, KeepsTheFirstMebibyteOfEachStream) {
  Result<SubprocessResult> r = Sh("head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);  // the rest was read, not left to block the child
  EXPECT_EQ(r->out.size(), kMaxSubprocessCapture);
  EXPECT_EQ(r->err.size(), kMaxSubprocessCapture);
}

TEST(SubprocessTest, TimeoutKillsTheWholeProcessGroup) {
  const std::string pid_file = "/tmp/baton-subprocess-test-" + std::to_string(getpid());
  const int64_t start = NowMillis();
  Result<SubprocessResult> r = Sh("sleep 30 & echo $! > " + pid_file + "; sleep 30", 500);
  const int64_t took = NowMillis() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().message();
  EXPECT_NE(r.status().message().find("500 ms"), std::string::npos) << r.status().message();
  EXPECT_GE(took, 500);
  EXPECT_LT(took, 3000);
  // The background sleep, in the same group, died too.
  pid_t background = 0;
  std::ifstream(pid_file) >> background;
  unlink(pid_file.c_str());
  ASSERT_GT(background, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::string state;
    std::ifstream stat("/proc/" + std::to_string(background) + "/stat");
    std::string pid, name;
    gone = !(stat >> pid >> name >> state) || state == "Z";
    if (!gone) usleep(10000);
  }
  EXPECT_TRUE(gone) << "sleep " << background << " survived the timeout";
}

TEST(SubprocessTest, ExitEndsTheWaitEvenWhenABackgroundChildHoldsStdout) {
  const int64_t start = NowMillis();
  Result<SubprocessResult> r = Sh("sleep 3 & echo started", 10000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "started\n");
  EXPECT_LT(NowMillis() - start, 2000);
}

TEST(SubprocessTest, SignalsAreDefaultInTheChild) {
  struct sigaction ignore = {};
  struct sigaction saved = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ignore, &saved);
  Result<SubprocessResult> r = Sh("kill -TERM $$; sleep 5", 10000);
  sigaction(SIGTERM, &saved, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_EQ(r->exit_code, 128 + SIGTERM);
}

// With on_start the child is started behind a gate (fork, not
// posix_spawn): it behaves as any other, and the program runs only after
// on_start has seen its group.
TEST(SubprocessTest, OnStartSeesTheGroupBeforeTheProgramRuns) {
  testing::TempDir dir;
  const std::string marker = dir.File("ran");
  struct Case {
    std::vector<std::string> argv;
    std::string stdin_text;
    std::vector<std::string> env;
    std::string cwd;
    int64_t timeout_ms;
    int exit_code;
    std::string out;
    std::string err;
    StatusCode code;
  };
  const Case cases[] = {
      {{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, "", {}, "", 10000, 3, "out\n", "err\n",
       StatusCode::kOk},
      {{"echo", "$HOME", "a b"}, "", {}, "", 10000, 0, "$HOME a b\n", "", StatusCode::kOk},
      {{"/bin/sh", "-c", "cat; echo \"$X\"; pwd"}, "in\n", {"X=1", "PATH=/usr/bin:/bin"}, "/", 10000,
       0, "in\n1\n/\n", "", StatusCode::kOk},
      // Its own group: $$ leads it (field 5 of /proc/PID/stat).
      {{"/bin/sh", "-c", "[ \"$(cut -d' ' -f5 /proc/$$/stat)\" = $$ ] && echo leader"}, "", {}, "",
       10000, 0, "leader\n", "", StatusCode::kOk},
      {{"/bin/sh", "-c", "kill -TERM $$; sleep 5"}, "", {}, "", 10000, 128 + SIGTERM, "", "",
       StatusCode::kOk},
      {{"/bin/sh", "-c", "sleep 5"}, "", {}, "", 200, -1, "", "", StatusCode::kDeadlineExceeded},
      {{"baton-no-such-program-4711"}, "", {}, "", 10000, -1, "", "", StatusCode::kFailedPrecondition},
      {{"/bin/true"}, "", {}, dir.File("missing"), 10000, -1, "", "", StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    const std::string name = c.argv.back();
    int64_t seen_pgid = -1;
    Result<SubprocessResult> r = RunSubprocess(
        {.argv = c.argv,
         .env = c.env,
         .cwd = c.cwd,
         .stdin_text = c.stdin_text,
         .timeout_ms = c.timeout_ms,
         .on_start = [&](int64_t pgid, int64_t start) {
           seen_pgid = pgid;
           EXPECT_EQ(ProcessStartTicks(pgid), start) << name;
           return Status();
         }});
    EXPECT_GT(seen_pgid, 1) << name;
    ASSERT_EQ(r.status().code(), c.code) << name << ": " << r.status().message();
    if (!r.ok()) continue;
    EXPECT_EQ(r->exit_code, c.exit_code) << name;
    EXPECT_EQ(r->out, c.out) << name;
    EXPECT_EQ(r->err, c.err) << name;
  }
  // Nothing has run when on_start is called; its error is returned and the
  // program never runs.
  Result<SubprocessResult> refused = RunSubprocess(
      {.argv = {"/bin/sh", "-c", "touch " + marker},
       .on_start = [&](int64_t pgid, int64_t) {
         EXPECT_FALSE(std::filesystem::exists(marker));
         EXPECT_EQ(ProcessGroupMembers(pgid), std::vector<int64_t>{pgid});
         return AbortedError("the run was taken over");
       }});
  EXPECT_EQ(refused.status().code(), StatusCode::kAborted);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(SubprocessTest, MissingProgramIsFailedPrecondition) {
  Result<SubprocessResult> r = RunSubprocess({.argv = {"baton-no-such-program-4711"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().message();
  EXPECT_NE(r.status().message().find("cannot start baton-no-such-program-4711"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(RunSubprocess({}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace baton


namespace baton {
namespace {

// ---- atomic_file ----------------------------------------------------------

TEST(AtomicFileTest, ReplacesTheWholeFileAndLeavesNothingBehind) {
  testing::TempDir dir;
  const std::string path = dir.File("state.json");
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new and longer").ok());
  EXPECT_EQ(*ReadFile(path), "new and longer");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += e.exists();
  EXPECT_EQ(entries, 1);
}

TEST(AtomicFileTest, AFailedWriteNamesThePathAndChangesNothing) {
  testing::TempDir dir;
  Status s = WriteFileAtomically(dir.File("missing/state.json"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir.File("missing")), std::string::npos) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing")));
}

TEST(AtomicFileTest, StaleTemporariesOfThatFileAloneAreRemoved) {
  testing::TempDir dir;
  const std::string path = dir.File("state.json");
  ASSERT_TRUE(WriteFileAtomically(dir.File(".state.json.baton-tmp-1-2"), "torn").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.File(".other.json.baton-tmp-1-2"), "another's").ok());
  Result<FolderLock> lock = FolderLock::Acquire(dir.path());
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(RemoveStaleTemporaries(path), 1);
  EXPECT_TRUE(std::filesystem::exists(dir.File(".other.json.baton-tmp-1-2")));
}

TEST(AtomicFileTest, AFolderLockExcludesAnotherProcess) {
  testing::TempDir dir;
  Result<FolderLock> lock = FolderLock::Acquire(dir.path());
  ASSERT_TRUE(lock.ok());
  // A child trying the same lock without blocking fails while we hold it.
  testing::ProcessResult held = testing::RunShell("flock -n " + dir.path() + " true");
  EXPECT_NE(held.exit_code, 0);
  { FolderLock released = std::move(*lock); }
  testing::ProcessResult free = testing::RunShell("flock -n " + dir.path() + " true");
  EXPECT_EQ(free.exit_code, 0);
}

}  // namespace
}  // namespace baton
