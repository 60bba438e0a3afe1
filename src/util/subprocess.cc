#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <dirent.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/clock.h"
#include "util/json_util.h"

extern char** environ;

namespace baton {
namespace {

// While the pipes are open we look at the child's state this often: a
// background grandchild may hold them long after the child has exited.
constexpr int kTickMillis = 20;
// After the exit, at most this many reads per stream: a grandchild that
// keeps writing must not keep us.
constexpr int kReadsAfterExit = 256;

std::string Errno(int e) { return std::strerror(e); }

// Closes the descriptor it holds when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int* put() { return &fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe whose read end does not block.
bool MakePipe(Fd* read_end, Fd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  *read_end->put() = fds[0];
  *write_end->put() = fds[1];
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return true;
}

// An unlinked temporary file holding "text", positioned at its start. Unlike
// a pipe it never fills, so a child that ignores its stdin cannot block us.
// -1 with errno set on failure.
int TempFileWith(const std::string& text) {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/baton-stdin-XXXXXX";
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  unlink(path.c_str());
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

enum class ReadState { kMore, kEmpty, kClosed };

// One read() from non-blocking "fd" into "sink", keeping at most
// kMaxSubprocessCapture bytes.
ReadState ReadSome(int fd, std::string* sink) {
  char buf[16384];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    const size_t room = kMaxSubprocessCapture - std::min(kMaxSubprocessCapture, sink->size());
    sink->append(buf, std::min(room, static_cast<size_t>(n)));
    return ReadState::kMore;
  }
  if (n < 0 && errno == EINTR) return ReadState::kMore;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadState::kEmpty;
  return ReadState::kClosed;
}

// Starts the child with stdin from "in_fd" (/dev/null when -1) and stdout,
// stderr to "out_fd", "err_fd". Returns posix_spawnp's error number.
int Spawn(const SubprocessOptions& options, int in_fd, int out_fd, int err_fd, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  // A server ignores SIGPIPE and handles SIGINT/SIGTERM; the child must not
  // inherit that. Its own group lets a timeout kill whatever it started.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv, envp;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int rc = posix_spawnp(pid, argv[0], &actions, &attr, argv.data(),
                              options.env.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// Starts the child like Spawn, with fork: the child puts itself in its own
// process group, asks for SIGKILL when this thread dies, and waits until a
// byte arrives on "gate" (or its end closes: then it exits 127) before it
// executes the program. An exec failure sends its errno on "report".
// Returns fork's errno, 0 when the child exists.
int ForkGated(const SubprocessOptions& options, int in_fd, int out_fd, int err_fd, int gate,
              int report, pid_t* pid) {
  // Everything the child needs is made before fork: after it, in a
  // threaded process, the child may only call async-signal-safe functions.
  std::vector<char*> argv, envp;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* const* env = options.env.empty() ? environ : envp.data();
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const pid_t parent = getpid();
  // No handler of ours may run in the child: signals stay blocked until it
  // has set them to their defaults.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig == SIGKILL || sig == SIGSTOP) continue;
      struct sigaction dfl = {};
      dfl.sa_handler = SIG_DFL;
      sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (getppid() != parent) _exit(127);  // we died before the death signal was asked for
    int code = 0;
    if (in_fd >= 0) {
      if (dup2(in_fd, 0) < 0) code = errno;
    } else {
      const int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd < 0 || dup2(null_fd, 0) < 0) code = errno;
      if (null_fd > 0) close(null_fd);
    }
    if (code == 0 && (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)) code = errno;
    if (code == 0 && cwd != nullptr && chdir(cwd) != 0) code = errno;
    char go = 0;
    ssize_t got;
    while ((got = read(gate, &go, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) _exit(127);  // the caller gave up on us
    if (code == 0) {
      execvpe(argv[0], argv.data(), env);
      code = errno;
    }
    (void)!write(report, &code, sizeof code);
    _exit(127);
  }
  const int fork_errno = child < 0 ? errno : 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (child < 0) return fork_errno;
  setpgid(child, child);  // also from here: the group exists when we return
  *pid = child;
  return 0;
}

struct Waited {
  int status = 0;
  bool timed_out = false;
  int wait_error = 0;  // errno of a failed waitpid
};

// Reads the child's stdout and stderr from "fds" into "sinks" until it exits,
// or kills its process group at "deadline_ms"; then takes what is left in the
// pipes without waiting for their end.
Waited Collect(pid_t pid, Fd fds[2], std::string* sinks[2], int64_t deadline_ms) {
  Waited w;
  pollfd polls[2] = {{fds[0].get(), POLLIN, 0}, {fds[1].get(), POLLIN, 0}};
  int idle_wait = 1;  // once both pipes are closed, back off up to a tick
  for (;;) {
    const pid_t done = waitpid(pid, &w.status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      w.wait_error = errno;
      break;
    }
    const int64_t left = deadline_ms - NowMillis();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &w.status, 0) < 0 && errno == EINTR) {
      }
      w.timed_out = true;
      break;
    }
    const bool closed = polls[0].fd < 0 && polls[1].fd < 0;
    const int wait = closed ? idle_wait : kTickMillis;
    if (closed) idle_wait = std::min(idle_wait * 2, kTickMillis);
    // With both fds negative poll() just sleeps.
    if (poll(polls, 2, static_cast<int>(std::min<int64_t>(left, wait))) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (polls[i].fd < 0 || polls[i].revents == 0) continue;
      if (ReadSome(polls[i].fd, sinks[i]) == ReadState::kClosed) polls[i].fd = -1;
    }
  }
  for (int i = 0; i < 2; ++i) {
    for (int n = 0; polls[i].fd >= 0 && n < kReadsAfterExit; ++n) {
      if (ReadSome(polls[i].fd, sinks[i]) != ReadState::kMore) break;
    }
    fds[i].Reset();
  }
  return w;
}

}  // namespace

Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return InvalidArgumentError("subprocess: argv is empty");
  const std::string& program = options.argv.front();
  Fd in;
  if (!options.stdin_text.empty()) {
    *in.put() = TempFileWith(options.stdin_text);
    if (in.get() < 0) {
      return InternalError("cannot write the stdin of " + program +
                           " to a temporary file: " + Errno(errno));
    }
  }
  Fd read_ends[2], write_ends[2];
  for (int i = 0; i < 2; ++i) {
    if (!MakePipe(&read_ends[i], &write_ends[i])) {
      return InternalError("cannot create a pipe for " + program + ": " + Errno(errno));
    }
  }
  pid_t pid = -1;
  if (!options.on_start) {
    const int rc = Spawn(options, in.get(), write_ends[0].get(), write_ends[1].get(), &pid);
    in.Reset();
    write_ends[0].Reset();
    write_ends[1].Reset();
    if (rc != 0) return FailedPreconditionError("cannot start " + program + ": " + Errno(rc));
  } else {
    Fd gate_read, gate_write, report_read, report_write;
    if (!MakePipe(&gate_read, &gate_write) || !MakePipe(&report_read, &report_write)) {
      return InternalError("cannot create a pipe for " + program + ": " + Errno(errno));
    }
    fcntl(report_read.get(), F_SETFL, 0);  // blocking: we wait for the exec
    fcntl(gate_read.get(), F_SETFL, 0);    // blocking: the child waits for the word
    const int rc = ForkGated(options, in.get(), write_ends[0].get(), write_ends[1].get(),
                             gate_read.get(), report_write.get(), &pid);
    in.Reset();
    write_ends[0].Reset();
    write_ends[1].Reset();
    gate_read.Reset();
    report_write.Reset();
    if (rc != 0) return FailedPreconditionError("cannot start " + program + ": " + Errno(rc));
    auto reap = [pid] {
      kill(-pid, SIGKILL);
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    };
    if (Status recorded = options.on_start(pid, ProcessStartTicks(pid)); !recorded.ok()) {
      reap();
      return recorded;
    }
    // A child killed meanwhile closed the gate: EPIPE, without the SIGPIPE
    // that would end a process that does not ignore it.
    const char go = 1;
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    const ssize_t sent = write(gate_write.get(), &go, 1);
    const int send_errno = errno;
    if (sent != 1 && send_errno == EPIPE) {
      const timespec now = {0, 0};
      sigtimedwait(&pipe_set, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
    if (sent != 1) {
      reap();
      return FailedPreconditionError("cannot start " + program + ": " + Errno(send_errno));
    }
    gate_write.Reset();
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(report_read.get(), &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
      reap();
      return FailedPreconditionError("cannot start " + program + ": " + Errno(exec_errno));
    }
  }

  SubprocessResult result;
  std::string* sinks[2] = {&result.out, &result.err};
  const Waited w = Collect(pid, read_ends, sinks, NowMillis() + options.timeout_ms);
  if (w.wait_error != 0) {
    return InternalError("cannot wait for " + program + ": " + Errno(w.wait_error));
  }
  if (w.timed_out) {
    return DeadlineExceededError(program + ": no answer within " +
                                 std::to_string(options.timeout_ms) +
                                 " ms; its process group was killed");
  }
  if (WIFSIGNALED(w.status)) result.signal = WTERMSIG(w.status);
  result.exit_code = result.signal != 0 ? 128 + result.signal : WEXITSTATUS(w.status);
  return result;
}

int64_t ProcessStartTicks(int64_t pid) {
  if (pid <= 0) return -1;
  Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return -1;
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the
  // fields start after the last ')'.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> fields;
  size_t pos = close + 1;
  while (pos < stat->size() && fields.size() < 20) {
    while (pos < stat->size() && (*stat)[pos] == ' ') ++pos;
    const size_t end = stat->find(' ', pos);
    fields.push_back(stat->substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end;
  }
  // fields[0] is the state (field 3), fields[19] the start time (field 22).
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return -1;
  return std::strtoll(fields[19].c_str(), nullptr, 10);
}

namespace {

// Fields 3.. of /proc/PID/stat (state, ppid, pgrp, ...), or empty.
std::vector<std::string> StatFields(int64_t pid, size_t want) {
  Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return {};
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return {};
  std::vector<std::string> fields;
  size_t pos = close + 1;
  while (pos < stat->size() && fields.size() < want) {
    while (pos < stat->size() && (*stat)[pos] == ' ') ++pos;
    const size_t end = stat->find(' ', pos);
    fields.push_back(stat->substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end;
  }
  return fields;
}

}  // namespace

std::vector<int64_t> ProcessGroupMembers(int64_t pgid) {
  std::vector<int64_t> out;
  if (pgid <= 0) return out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long long pid = std::strtoll(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    const std::vector<std::string> f = StatFields(pid, 3);
    if (f.size() < 3 || f[0] == "Z" || f[0] == "X") continue;
    if (std::strtoll(f[2].c_str(), nullptr, 10) == pgid) out.push_back(pid);
  }
  closedir(proc);
  return out;
}

std::string EndProcessGroup(int64_t pgid, int64_t leader_start_ticks, int64_t grace_ms) {
  if (pgid <= 1 || pgid > INT_MAX) return "not ours (pgid " + std::to_string(pgid) + ")";
  const int64_t leader = ProcessStartTicks(pgid);
  if (leader >= 0 && leader != leader_start_ticks) {
    return "not ours (pid " + std::to_string(pgid) + " is another process now)";
  }
  std::vector<int64_t> members = ProcessGroupMembers(pgid);
  if (members.empty()) return "no process left";
  if (leader < 0) {
    for (int64_t m : members) {
      const int64_t started = ProcessStartTicks(m);
      if (started >= 0 && started < leader_start_ticks) {
        return "not ours (process " + std::to_string(m) + " of group " + std::to_string(pgid) +
               " started before its recorded leader)";
      }
    }
  }
  const size_t count = members.size();
  const auto wait_gone = [pgid](int64_t ms) {
    for (int64_t waited = 0;; waited += 10) {
      if (ProcessGroupMembers(pgid).empty()) return true;
      if (waited >= ms) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  kill(static_cast<pid_t>(-pgid), SIGTERM);
  if (wait_gone(grace_ms)) return "ended by SIGTERM (" + std::to_string(count) + " processes)";
  kill(static_cast<pid_t>(-pgid), SIGKILL);
  wait_gone(1000);
  return "ended by SIGKILL (" + std::to_string(count) + " processes)";
}

Status SpawnDetached(const std::string& program, const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgumentError("argv: empty");
  // Everything the children need is made before fork: after it, in a
  // process that has threads, only async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The program's child writes exec's errno here; a successful exec closes
  // it (O_CLOEXEC), and the middle process's exit says whether its fork did.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return InternalError(std::string("starting ") + program + ": pipe: " + std::strerror(errno));
  }
  // Above the standard three, which the child replaces (a caller that
  // closed one of them would get it back as the pipe).
  for (int& end : report) {
    if (end > 2) continue;
    const int moved = ::fcntl(end, F_DUPFD_CLOEXEC, 3);
    if (moved >= 0) {
      ::close(end);
      end = moved;
    }
  }
  const pid_t middle = ::fork();
  if (middle < 0) {
    const int saved = errno;
    ::close(report[0]);
    ::close(report[1]);
    return InternalError(std::string("starting ") + program + ": fork: " + std::strerror(saved));
  }
  if (middle == 0) {
    ::close(report[0]);
    ::setsid();
    const pid_t child = ::fork();
    if (child != 0) ::_exit(child < 0 ? 1 : 0);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    // Every other descriptor closes but the report pipe's (close on exec).
    if (report[1] > 3) ::close_range(3, static_cast<unsigned>(report[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(report[1]) + 1, ~0U, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(program.c_str(), args.data());
    const int failed = errno;
    (void)!::write(report[1], &failed, sizeof failed);
    ::_exit(127);
  }
  ::close(report[1]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return InternalError(std::string("starting ") + program + ": fork failed");
  }
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    return InternalError(std::string("starting ") + program + ": " + std::strerror(exec_errno));
  }
  return Status();
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

}  // namespace baton
