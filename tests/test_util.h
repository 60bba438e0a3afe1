// File: test_util.h
//
// Helpers shared by the suites: temporary folders, an Api on a fresh store,
// and running the built `baton` binary as a separate process.

#ifndef BATON_TESTS_TEST_UTIL_H_
#define BATON_TESTS_TEST_UTIL_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/api.h"
#include "util/clock.h"

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

// An Api on "location" (":memory:" or a file) whose operations read the
// time from "time" (null: the system clock); aborts the test on failure.
std::unique_ptr<Api> OpenApi(const std::string& location, bool group_commit = false,
                             const TimeSource* time = nullptr);

inline Actor Human() { return Actor{"alice", "human"}; }
inline Actor Coordinator() { return Actor{"coord", "coordinator"}; }
inline Actor Agent(const std::string& id = "coder") { return Actor{id, "agent"}; }
// "a" holding every grant, as the user at the terminal does: for suites
// whose callers run commands or name folders outside the store's project.
inline Actor Granted(Actor a) {
  a.grants = AllGrants();
  return a;
}

// Polls "done" until it holds or "timeout_ms" has passed: a bound on a wait,
// never a timing check. The result of the last poll.
bool Eventually(const std::function<bool()>& done, int64_t timeout_ms = 10000);

// Calls and asserts success, returning the result (null JSON on failure,
// after recording a test failure naming the op and status).
Json MustCall(Api& api, const std::string& op, const Json& input,
              const Actor& actor = Human());

// Number of ledger events in the store.
int64_t LedgerLength(Api& api);

// Calls "op" expecting it to fail with "code" and to leave the ledger as it
// was (a refused call changes nothing); returns the status for more checks.
Status Refused(Api& api, const std::string& op, const Json& input, StatusCode code,
               const Actor& actor = Human());

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Path of the built baton binary ($BATON_BIN, set by CTest).
std::string BatonBin();
// Runs `baton args...` with "env" added to the environment; waits for it.
ProcessResult RunBaton(const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {},
                       const std::string& stdin_text = "");
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

#endif  // BATON_TESTS_TEST_UTIL_H_
