// File: test_env.h
//
// What every suite may use, whatever layer it tests: temporary folders, a
// clock a test moves, a bounded wait, and the built `baton` binary run as a
// separate process (a store made, a server started, a token made) the way a
// user runs it. Links only baton_util: a suite that drives the binary links
// nothing of the engine.

#ifndef BATON_TESTS_TESTING_TEST_ENV_H_
#define BATON_TESTS_TESTING_TEST_ENV_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/json_util.h"  // the binary answers in JSON

namespace baton::testing {

// A fresh folder under $TMPDIR, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A clock that moves only when told: a test lets a lease expire or an
// agent fall silent with Advance() instead of sleeping. It starts at the
// system time, so the times it gives look like real ones.
class FakeTime final : public TimeSource {
 public:
  FakeTime() : now_(::baton::NowMillis()) {}
  int64_t NowMillis() const override { return now_.load(); }
  void Advance(int64_t millis) { now_ += millis; }

 private:
  std::atomic<int64_t> now_;  // read by the writer thread under group commit
};

// Polls "done" until it holds or "timeout_ms" has passed: a bound on a wait,
// never a timing check. The result of the last poll.
bool Eventually(const std::function<bool()>& done, int64_t timeout_ms = 10000);

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Path of the built baton binary ($BATON_BIN, else the build tree's).
std::string BatonBin();
// Runs `baton args...` with "env" added to the environment; waits for it.
ProcessResult RunBaton(const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {},
                       const std::string& stdin_text = "");
// The live processes (zombies left out) whose arguments include every one
// of "args", each as a whole argument: a detached `baton flush-mirrors
// --background` is no child of the test, but it can be found.
std::vector<int> LiveProcessesWithArgs(const std::vector<std::string>& args);
// The live processes holding a file open whose name starts with "prefix"
// (a path): who is writing a temporary file.
std::vector<int> LiveProcessesWithFileOpen(const std::string& prefix);
// Makes a store at "path" with `baton --store PATH init` (as users do: no
// other command makes one) and returns "path"; a test failure if it could not.
std::string InitStore(const std::string& path);
// `baton serve` started in the background on a free port.
class ServeProcess {
 public:
  // Starts `baton --store STORE serve --listen 127.0.0.1:0 extra...` and
  // waits until it prints where it listens and the human's link. Its
  // standard error goes to "err_file" when one is named.
  explicit ServeProcess(const std::string& store, const std::vector<std::string>& extra = {},
                        const std::string& err_file = "");
  ~ServeProcess();  // SIGKILL if still running
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The human's secret from the start-up link ("" under --auth none): send
  // it as "Authorization: Bearer SECRET" to call as the human.
  const std::string& secret() const { return secret_; }
  // Sends "sig" and waits; returns the exit code (128+signal when killed).
  int Signal(int sig);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string secret_;
};

// A bearer token for "holder" with "role" and "grants" on "store", made with
// `baton token create` as the terminal's user; "" (and a test failure) when
// it could not be made.
std::string MakeToken(const std::string& store, const std::string& holder, const std::string& role,
                      const std::vector<std::string>& grants = {});

// Runs a shell command; returns its exit code and output.
ProcessResult RunShell(const std::string& command);

}  // namespace baton::testing

#endif  // BATON_TESTS_TESTING_TEST_ENV_H_
