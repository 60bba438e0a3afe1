// File: atomic_file.h
//
// Durable whole-file replacement, for seed-file mirrors and `baton export
// -o`: the text goes to a unique temporary file in the same folder, which is
// fsynced, renamed over the target, and the folder fsynced — so a reader
// sees the old file or the new one, never a torn one, and once the call
// returns a power cut loses neither the file nor its name.

#ifndef BATON_SRC_UTIL_ATOMIC_FILE_H_
#define BATON_SRC_UTIL_ATOMIC_FILE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "baton/status.h"

namespace baton {

// Temporary files are named ".<name>.baton-tmp-<pid>-<random>" beside
// "path". On failure the temporary file is removed and the target is left
// as it was; the error names the path and the step that failed. (Crash
// tests set BATON_TEST_PAUSE_MID_WRITE_MS to hold every write half done.)
Status WriteFileAtomically(const std::string& path, std::string_view text);

// The same inside the folder open as "dir_fd" (openat/renameat: the folder
// is the one opened, whatever its path names by now), the file "name" in it;
// "path" names the target in messages. The temporary file is created with
// O_NOFOLLOW|O_EXCL.
Status WriteFileAtomicallyAt(int dir_fd, const std::string& name, std::string_view text,
                             const std::string& path);

// Streams a file too large to hold whole: "fill" is called once with a
// writer that appends to the temporary file; the file replaces "path" as
// above only when "fill" returns OK (its error is returned as is).
using FileWrite = std::function<Status(std::string_view data)>;
using FileFiller = std::function<Status(const FileWrite& write)>;
Status WriteFileAtomicallyBy(const std::string& path, const FileFiller& fill);

// An exclusive flock(2) on a folder, held for the object's life: writers of
// the same folder's mirrors take it in turn, across processes.
class FolderLock {
 public:
  static Result<FolderLock> Acquire(const std::string& folder);
  FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FolderLock& operator=(FolderLock&&) = delete;
  ~FolderLock();

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  int fd_;
};

// An exclusive lock on one byte of a file (an open-file-description lock,
// fcntl F_OFD_SETLK): two in one process exclude each other as two
// processes do, different bytes of one file are different locks, and the
// lock goes with the object or its process. The file is created (0600) if
// it is missing and never removed.
class ByteLock {
 public:
  // Waits until the lock is free.
  static Result<ByteLock> Acquire(const std::string& path, int64_t byte);
  // The lock if it is free now; none if another holds it.
  static Result<std::optional<ByteLock>> TryAcquire(const std::string& path, int64_t byte);
  ByteLock(ByteLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ByteLock& operator=(ByteLock&&) = delete;
  ~ByteLock();

 private:
  explicit ByteLock(int fd) : fd_(fd) {}
  int fd_;
};

// Whether the file open as "fd" is the one "path" names now (not removed,
// moved away or replaced since it was opened): a file held open between
// writes checks it before each.
bool SameFileAtPath(int fd, const std::string& path);

// Removes the temporary files a killed writer left beside "path". Call it
// only while holding the folder's FolderLock. Returns how many it removed.
int RemoveStaleTemporaries(const std::string& path);

}  // namespace baton

#endif  // BATON_SRC_UTIL_ATOMIC_FILE_H_
