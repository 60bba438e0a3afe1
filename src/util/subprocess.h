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
#include <functional>
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
  // When set: called once the child exists, in its process group, and
  // before it runs the program (it waits for this to return), with the
  // group's id (the child's pid) and its leader's ProcessStartTicks — so a
  // caller can record the group durably before the program can do anything.
  // An error kills the child and is what RunSubprocess returns. Such a
  // child also gets SIGKILL should the calling thread die first
  // (PR_SET_PDEATHSIG; its own children are not covered: see
  // EndProcessGroup).
  std::function<Status(int64_t pgid, int64_t start_ticks)> on_start;
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

// The live processes (zombies left out) of process group "pgid" on this
// host, by /proc.
std::vector<int64_t> ProcessGroupMembers(int64_t pgid);

// Ends process group "pgid", whose leader started at "leader_start_ticks"
// (as on_start reported it): SIGTERM, up to "grace_ms" for the group to
// go, then SIGKILL. A reused pid is left alone: the group is ours when its
// leader is the process recorded (same start), or when the leader is gone
// and the group's live members all started after it did (a pgid cannot be
// handed out again while any member lives). Returns what it did, in words:
// "no process left", "not ours (...)", "ended by SIGTERM (n processes)",
// "ended by SIGKILL (n processes)".
std::string EndProcessGroup(int64_t pgid, int64_t leader_start_ticks, int64_t grace_ms);

// Starts "program" (a path) with "argv" (argv[0] its name) detached: in a
// session of its own, stdin, stdout and stderr /dev/null, no other
// descriptor of ours, every signal at its default and none blocked, a child
// of init rather than ours (started through an intermediate process that
// exits at once, so nothing is left for us to reap). Returns once it runs
// the program, without waiting for it; Internal when it could not be
// started (no process left to fork, the program not executable), naming why.
Status SpawnDetached(const std::string& program, const std::vector<std::string>& argv);

// This host's name; "" when it cannot be read.
std::string HostName();

}  // namespace baton

#endif  // BATON_SRC_UTIL_SUBPROCESS_H_
