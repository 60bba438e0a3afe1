// One `baton` command on a long run leaves the run's mirror to a background
// `baton flush-mirrors` (issue 21 item 2): the command does not render the
// run, the file still never tears, `baton flush-mirrors` waits for what was
// handed off, and commands that come meanwhile share one background flush.
// Drives the real binary as separate processes (scenario).

#include <dirent.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "test_util.h"
#include "util/atomic_file.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::InitStore;
using testing::MustCall;
using testing::OpenApi;
using testing::RunBaton;
using testing::TempDir;

// The notes sgai's state.json lists (every note of the run), or -1 when the
// file is no whole JSON document.
int NotesIn(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return -1;
  Json doc = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return -1;
  return static_cast<int>(doc.value("progress", Json::array()).size());
}

bool HasTemporary(const std::string& folder) {
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().filename().string().find(".baton-tmp-") != std::string::npos) return true;
  }
  return false;
}

// Live `baton ... flush-mirrors --background` processes naming "store".
int BackgroundFlushes(const std::string& store) {
  int n = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream stat_in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
    const bool zombie = stat.find(") Z ") != std::string::npos;
    if (!zombie && cmdline.find(store) != std::string::npos &&
        cmdline.find(std::string("flush-mirrors\0--background", 26)) != std::string::npos) {
      ++n;
    }
  }
  ::closedir(proc);
  return n;
}

template <typename Pred>
bool WaitFor(Pred pred, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class MirrorHandOffTest : public ::testing::Test {
 protected:
  // A run of "notes" progress notes with an sgai mirror bound to it.
  void MakeRun(int notes) {
    store_ = InitStore(dir_.File("baton.db"));
    {
      auto api = OpenApi(store_);
      run_ = MustCall(*api, "run.create", {{"profile", "sgai"}})["id"].get<std::string>();
      for (int i = 1; i <= notes; ++i) {
        MustCall(*api, "run.add_progress", {{"id", run_}, {"description", "note " + std::to_string(i)}});
      }
    }
    mirror_dir_ = dir_.File("repo/.sgai");
    fs::create_directories(mirror_dir_);
    mirror_ = mirror_dir_ + "/state.json";
    auto bound = RunBaton({"--store", store_, "mirror", "bind", "--run", run_, "--format", "sgai",
                           "--path", mirror_});
    ASSERT_EQ(bound.exit_code, 0) << bound.err;
    // A long run's first rendering is handed off too: waited for here.
    auto flushed = RunBaton({"--store", store_, "flush-mirrors"});
    ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
    ASSERT_EQ(NotesIn(mirror_), notes);
  }

  testing::ProcessResult AddNote(const std::string& text, const std::vector<std::string>& env = {}) {
    return RunBaton({"--store", store_, "run", "add-progress", "--id", run_, "--description", text},
                    env);
  }

  TempDir dir_;
  std::string store_, run_, mirror_dir_, mirror_;
};

TEST_F(MirrorHandOffTest, AShortRunsMirrorIsWrittenBeforeTheCommandReturns) {
  MakeRun(3);
  auto added = AddNote("fourth");
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(NotesIn(mirror_), 4);
  EXPECT_EQ(BackgroundFlushes(store_), 0);
}

TEST_F(MirrorHandOffTest, ALongRunsMirrorIsWrittenInTheBackgroundAndFlushWaitsForIt) {
  MakeRun(300);
  // Every mirror write holds still half done for two seconds: the command
  // returns while its hand-off's write is held, which a command that
  // rendered the run itself could not.
  auto added = AddNote("note 301", {"BATON_TEST_PAUSE_MID_WRITE_MS=2000"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  ASSERT_TRUE(WaitFor([&] { return HasTemporary(mirror_dir_); }, 30))
      << "no background write started";
  EXPECT_EQ(NotesIn(mirror_), 300) << "the file is the previous one, whole, until the rename";
  // flush-mirrors waits for the background write's turn, then finds
  // nothing behind (or writes what is).
  auto flushed = RunBaton({"--store", store_, "flush-mirrors"});
  ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
  EXPECT_EQ(NotesIn(mirror_), 301);
  EXPECT_FALSE(HasTemporary(mirror_dir_));
  auto again = RunBaton({"--store", store_, "flush-mirrors"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "every mirror is up to date\n");
}

TEST_F(MirrorHandOffTest, CommandsWhileAFlushIsBusyShareOneMore) {
  MakeRun(300);
  auto first = AddNote("note 301", {"BATON_TEST_PAUSE_MID_WRITE_MS=8000"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(WaitFor([&] { return HasTemporary(mirror_dir_); }, 30));
  // Ten more while the first flush's write is held: each starts a flush,
  // one of them waits for its turn and the rest see it waiting and go.
  for (int i = 302; i <= 311; ++i) {
    auto added = AddNote("note " + std::to_string(i));
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }
  // Well before the held write ends (flushes queued for their turn would
  // all still be alive then).
  EXPECT_TRUE(WaitFor([&] { return BackgroundFlushes(store_) <= 2; }, 4))
      << BackgroundFlushes(store_) << " background flushes alive";
  // Without any command after them, the file catches up with all eleven.
  EXPECT_TRUE(WaitFor([&] { return NotesIn(mirror_) == 311; }, 60)) << NotesIn(mirror_);
  EXPECT_TRUE(WaitFor([&] { return BackgroundFlushes(store_) == 0; }, 20));
}

TEST_F(MirrorHandOffTest, FlushMirrorsWritesWhatAKilledCommandLeftBehind) {
  MakeRun(kHandOffMirrorsFromChanges);
  // A command killed between its commit and its mirror write: a run this
  // short is written before the call returns, unless the call is told a
  // background flush took it (and that flush never comes).
  {
    ApiOptions options;
    options.store.location = store_;
    options.start_background_flush = [] { return Status(); };
    auto api = Api::Open(options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    MustCall(**api, "run.add_progress", {{"id", run_}, {"description", "unmirrored"}});
  }
  ASSERT_EQ(NotesIn(mirror_), kHandOffMirrorsFromChanges);
  auto flushed = RunBaton({"--store", store_, "--output", "json", "flush-mirrors"});
  ASSERT_EQ(flushed.exit_code, 0) << flushed.err;
  EXPECT_EQ(Json::parse(flushed.out)["written"], Json::array({mirror_}));
  EXPECT_EQ(NotesIn(mirror_), kHandOffMirrorsFromChanges + 1);
}

}  // namespace
}  // namespace baton
