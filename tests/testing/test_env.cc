#include "test_env.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "util/json_util.h"
#include "util/subprocess.h"

namespace baton::testing {

TempDir::TempDir() {
  std::string base = std::filesystem::temp_directory_path().string() + "/baton-test-XXXXXX";
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  char* made = mkdtemp(buf.data());
  path_ = made != nullptr ? made : "/tmp";
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool Eventually(const std::function<bool()>& done, int64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

namespace {

// The pids of /proc whose process is not a zombie (util/subprocess.h
// ProcessStartTicks answers -1 for one).
std::vector<int> LiveProcesses() {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ProcessStartTicks(std::stoll(name)) >= 0) pids.push_back(std::stoi(name));
  }
  return pids;
}

}  // namespace

std::vector<int> LiveProcessesWithArgs(const std::vector<std::string>& args) {
  std::vector<int> found;
  for (int pid : LiveProcesses()) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::vector<std::string> have;
    for (std::string arg; std::getline(in, arg, '\0');) have.push_back(arg);
    bool all = true;
    for (const std::string& want : args) {
      all = all && std::find(have.begin(), have.end(), want) != have.end();
    }
    if (all) found.push_back(pid);
  }
  return found;
}

std::vector<int> LiveProcessesWithFileOpen(const std::string& prefix) {
  std::vector<int> found;
  for (int pid : LiveProcesses()) {
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(pid) + "/fd", ec)) {
      const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
      if (!ec && target.rfind(prefix, 0) == 0) {
        found.push_back(pid);
        break;
      }
    }
  }
  return found;
}

std::string BatonBin() {
  const char* bin = std::getenv("BATON_BIN");
  return bin != nullptr ? bin : BATON_BIN_PATH;
}

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

ProcessResult RunBaton(const std::vector<std::string>& args,
                       const std::vector<std::string>& env,
                       const std::string& stdin_text) {
  TempDir io;
  const std::string out = io.File("out");
  const std::string err = io.File("err");
  const std::string in = io.File("in");
  {
    std::ofstream f(in);
    f << stdin_text;
  }
  pid_t pid = fork();
  if (pid == 0) {
    int fd_in = open(in.c_str(), O_RDONLY);
    int fd_out = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fd_err = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd_in, 0);
    dup2(fd_out, 1);
    dup2(fd_err, 2);
    for (const std::string& kv : env) putenv(strdup(kv.c_str()));
    std::vector<char*> argv;
    std::string bin = BatonBin();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

ServeProcess::ServeProcess(const std::string& store, const std::vector<std::string>& extra,
                           const std::string& err_file) {
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(fds[1], 1);
    if (!err_file.empty()) dup2(open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    close(fds[0]);
    std::vector<std::string> args = {BatonBin(), "--store", store, "serve", "--listen",
                                     "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string seen;
  char c;
  // Read the banner's first two lines: the URL, then the human's link.
  for (int lines = 0; lines < 2 && read(fds[0], &c, 1) == 1;) {
    seen += c;
    if (c == '\n') ++lines;
  }
  close(fds[0]);
  const std::string first = seen.substr(0, seen.find('\n'));
  const size_t colon = first.rfind(':');
  if (first.find("listening on") != std::string::npos && colon != std::string::npos) {
    port_ = std::atoi(first.c_str() + colon + 1);
  }
  if (const size_t at = seen.find("#token="); at != std::string::npos) {
    const size_t start = at + 7;
    secret_ = seen.substr(start, seen.find_first_of(" \n", start) - start);
  }
  EXPECT_GT(port_, 0) << "baton serve did not start: " << seen;
}

std::string MakeToken(const std::string& store, const std::string& holder, const std::string& role,
                      const std::vector<std::string>& grants) {
  std::vector<std::string> args = {"--store", store, "--output", "json", "token", "create", holder,
                                   "--holder-role", role};
  for (const std::string& g : grants) args.insert(args.end(), {"--grant", g});
  ProcessResult r = RunBaton(args);
  Json made = Json::parse(r.out, nullptr, false);
  EXPECT_EQ(r.exit_code, 0) << "token create " << holder << ": " << r.out << r.err;
  return made.is_object() && made.contains("token") ? made["token"].get<std::string>() : "";
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) Signal(SIGKILL);
}

int ServeProcess::Signal(int sig) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ProcessResult RunShell(const std::string& command) {
  TempDir io;
  const std::string out = io.File("out");
  const std::string err = io.File("err");
  int status = std::system((command + " >" + out + " 2>" + err).c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

std::string InitStore(const std::string& path) {
  ProcessResult r = RunBaton({"--store", path, "init"});
  EXPECT_EQ(r.exit_code, 0) << "baton init --store " << path << ": " << r.err;
  return path;
}

}  // namespace baton::testing
