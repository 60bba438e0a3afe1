#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <filesystem>
#include <random>

namespace baton {
namespace {

namespace fs = std::filesystem;

// Crash tests set BATON_TEST_PAUSE_MID_WRITE_MS to hold a write half done,
// so that a kill lands inside it every time.
int PauseMidWriteMillis() {
  static const int ms = [] {
    const char* v = std::getenv("BATON_TEST_PAUSE_MID_WRITE_MS");
    return v == nullptr ? 0 : std::atoi(v);
  }();
  return ms;
}

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string TempPrefix(const fs::path& target) {
  return "." + target.filename().string() + ".baton-tmp-";
}

std::string FolderOf(const fs::path& target) {
  const fs::path parent = target.parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Writes every byte of "data" to "fd"; the error names "path".
Status WriteAll(int fd, std::string_view data, const std::string& path) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return InternalError(Errno("writing the new", path));
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

// The temporary file, filled by "fill", fsynced and renamed over "name".
Status ReplaceAt(int dir_fd, const std::string& name, const std::string& path,
                 const FileFiller& fill) {
  if (name.empty() || name.find('/') != std::string::npos) {
    return InvalidArgumentError("path: \"" + path + "\" names no file in its folder");
  }
  std::random_device rd;
  const std::string tmp =
      TempPrefix(fs::path(name)) + std::to_string(::getpid()) + "-" + std::to_string(rd());
  const int fd =
      ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  // Messages name the target and the step, never the temporary file's
  // random name: the same failure twice reads the same.
  if (fd < 0) return InternalError(Errno("creating a temporary file beside", path));
  // The new file keeps the old one's permissions.
  struct stat old {};
  if (::fstatat(dir_fd, name.c_str(), &old, 0) == 0) ::fchmod(fd, old.st_mode & 07777);
  // The temporary file goes on every way out but the rename (a throwing
  // "fill" included).
  struct Temporary {
    int dir_fd, fd;
    const std::string& name;
    ~Temporary() {
      if (fd >= 0) ::close(fd);
      if (!name.empty()) ::unlinkat(dir_fd, name.c_str(), 0);
    }
  };
  std::string tmp_name = tmp;
  Temporary temporary{dir_fd, fd, tmp_name};
  RETURN_IF_ERROR(fill([&](std::string_view data) { return WriteAll(fd, data, path); }));
  if (::fsync(fd) != 0) return InternalError(Errno("fsync of the new", path));
  temporary.fd = -1;
  if (::close(fd) != 0) return InternalError(Errno("closing the new", path));
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    return InternalError(Errno("renaming the new file over", path));
  }
  tmp_name.clear();
  if (::fsync(dir_fd) != 0) return InternalError(Errno("fsync of the folder of", path));
  return Status();
}

// "replace" called with "path"'s folder open and the file's name in it.
Status InFolderOf(const std::string& path,
                  const std::function<Status(int dir_fd, const std::string& name)>& replace) {
  const fs::path target(path);
  if (target.filename().empty()) return InvalidArgumentError("path: \"" + path + "\" names no file");
  const std::string folder = FolderOf(target);
  const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return InternalError(Errno("opening folder", folder));
  Status written = replace(dir_fd, target.filename().string());
  ::close(dir_fd);
  return written;
}

}  // namespace

Status WriteFileAtomicallyAt(int dir_fd, const std::string& name, std::string_view text,
                             const std::string& path) {
  return ReplaceAt(dir_fd, name, path, [&](const FileWrite& write) -> Status {
    if (PauseMidWriteMillis() <= 0 || text.empty()) return write(text);
    RETURN_IF_ERROR(write(text.substr(0, text.size() / 2)));
    std::this_thread::sleep_for(std::chrono::milliseconds(PauseMidWriteMillis()));
    return write(text.substr(text.size() / 2));
  });
}

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  return InFolderOf(path, [&](int dir_fd, const std::string& name) {
    return WriteFileAtomicallyAt(dir_fd, name, text, path);
  });
}

Status WriteFileAtomicallyBy(const std::string& path, const FileFiller& fill) {
  return InFolderOf(path, [&](int dir_fd, const std::string& name) {
    return ReplaceAt(dir_fd, name, path, fill);
  });
}

Result<FolderLock> FolderLock::Acquire(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return InternalError(Errno("opening folder", folder));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const std::string message = Errno("locking folder", folder);
    ::close(fd);
    return InternalError(message);
  }
  return FolderLock(fd);
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

namespace {

// "wait": F_OFD_SETLKW, else F_OFD_SETLK. Answers the open file, or -1 when
// the lock is held elsewhere (never with "wait").
Result<int> LockByte(const std::string& path, int64_t byte, bool wait) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return InternalError(Errno("opening lock file", path));
  struct flock range {};
  range.l_type = F_WRLCK;
  range.l_whence = SEEK_SET;
  range.l_start = byte;
  range.l_len = 1;
  while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &range) != 0) {
    if (errno == EINTR) continue;
    const int saved = errno;
    ::close(fd);
    if (!wait && (saved == EAGAIN || saved == EACCES)) return -1;
    errno = saved;
    return InternalError(Errno("locking", path));
  }
  return fd;
}

}  // namespace

Result<ByteLock> ByteLock::Acquire(const std::string& path, int64_t byte) {
  ASSIGN_OR_RETURN(int fd, LockByte(path, byte, /*wait=*/true));
  return ByteLock(fd);
}

Result<std::optional<ByteLock>> ByteLock::TryAcquire(const std::string& path, int64_t byte) {
  ASSIGN_OR_RETURN(int fd, LockByte(path, byte, /*wait=*/false));
  if (fd < 0) return std::optional<ByteLock>();
  return std::optional<ByteLock>(ByteLock(fd));
}

ByteLock::~ByteLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

int RemoveStaleTemporaries(const std::string& path) {
  const fs::path target(path);
  const std::string prefix = TempPrefix(target);
  std::error_code ec;
  int removed = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(FolderOf(target), ec)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0 && fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

bool SameFileAtPath(int fd, const std::string& path) {
  struct stat open {};
  struct stat named {};
  return ::fstat(fd, &open) == 0 && ::stat(path.c_str(), &named) == 0 &&
         open.st_dev == named.st_dev && open.st_ino == named.st_ino;
}

}  // namespace baton
