// File: subprocess.h
//
// Runs a program as a child process and collects what it says: the one place
// baton starts other programs (git for teams, delivery commands for mail).
// Thread-safe: every descriptor is opened close-on-exec, so children started
// from other threads at the same time inherit none of another's pipes.

#ifndef BATON_SRC_UTIL_SUBPROCESS_H_
#define BATON_SRC_UTIL_SUBPROCESS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/status.h"

namespace baton {

// At most this much of each of stdout and stderr is kept; the rest is read
// and discarded, so a talkative child never blocks on a full pipe.
constexpr size_t kMaxSubprocessCapture = size_t{1} << 20;

struct SubprocessOptions {
  // The program and its arguments; argv[0] is looked up on PATH unless it
  // holds a '/'. No shell runs unless this says {"/bin/sh", "-c", "..."}.
  std::vector<std::string> argv;
  // The child's whole environment ("NAME=value"); empty = inherit ours.
  std::vector<std::string> env;
  // The child's working directory; empty = ours.
  std::string cwd;
  // The child's stdin, given through an unlinked temporary file (never a
  // pipe, so a child that ignores its stdin cannot block us); empty stdin
  // reads /dev/null.
  std::string stdin_text;
  // After this the child's whole process group is killed.
  int64_t timeout_ms = 10000;
};

struct SubprocessResult {
  int exit_code = -1;  // 128 + the signal's number when a signal killed it
  int signal = 0;      // the signal that killed it; 0 when it exited
  std::string out;     // first kMaxSubprocessCapture bytes of stdout
  std::string err;     // first kMaxSubprocessCapture bytes of stderr
};

// Runs "options.argv" in a process group of its own, with SIGPIPE, SIGINT,
// SIGTERM and SIGHUP at their defaults and no signal blocked, whatever ours
// are, and returns its exit code and output once it has exited. The exit, not
// the end of its output, ends the wait: a background child that keeps stdout
// or stderr open does not hold us. Errors:
//   InvalidArgument    "options.argv" is empty;
//   FailedPrecondition the program cannot be started ("cannot start <argv[0]>:
//                      <reason>");
//   DeadlineExceeded   it ran past "options.timeout_ms"; its process group was
//                      killed and reaped (what it wrote is dropped);
//   Internal           no pipe or temporary file, or waitpid failed (as it does
//                      when SIGCHLD is ignored).
// Blocks the calling thread for up to "options.timeout_ms"; call it outside
// transactions.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

// When process "pid" of this host started, in clock ticks after boot (the
// 22nd field of /proc/PID/stat): with the pid, it names a process for good,
// since a pid is reused but not with the same start. -1 when there is no
// such process or it has exited and awaits its parent (a zombie).
int64_t ProcessStartTicks(int64_t pid);

// This host's name; "" when it cannot be read.
std::string HostName();

}  // namespace baton

#endif  // BATON_SRC_UTIL_SUBPROCESS_H_
