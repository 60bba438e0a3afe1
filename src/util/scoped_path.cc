#include "util/scoped_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>

#include "util/store_location.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

// Linux's own limit on symlinks followed in one lookup.
constexpr int kMaxSymlinks = 40;

std::string Quoted(std::string_view field) { return std::string(field) + ": "; }

std::deque<std::string> Components(std::string_view path) {
  std::deque<std::string> out;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t end = std::min(path.find('/', at), path.size());
    if (end > at) out.emplace_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "" : path.substr(0, slash);
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.empty() ? "/" : path.c_str(), &st) == 0;
}

struct Walked {
  std::string path;
  bool climbed = false;  // a ".." was taken
};

// "abs" with every symlink of its existing part replaced by its target and
// "." and ".." taken away, as the kernel would look it up.
Result<Walked> Walk(std::string_view field, const std::string& abs) {
  std::deque<std::string> todo = Components(abs);
  Walked w;
  std::string done;  // "" is "/"
  bool missing = false;
  int links = 0;
  while (!todo.empty()) {
    const std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      w.climbed = true;
      done = Parent(done);
      // Back in folders that exist: what follows is looked up for real again.
      missing = !Exists(done);
      continue;
    }
    std::string next = done + "/" + c;
    if (missing) {
      done = std::move(next);
      continue;
    }
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        return InvalidArgumentError(Quoted(field) + "cannot look at " + next + " (in " + abs +
                                    "): " + std::strerror(errno));
      }
      missing = true;
      done = std::move(next);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      done = std::move(next);
      continue;
    }
    if (++links > kMaxSymlinks) {
      return InvalidArgumentError(Quoted(field) + abs + " has more than " +
                                  std::to_string(kMaxSymlinks) + " symlinks in a row (a loop?)");
    }
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    const ssize_t n = ::readlink(next.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<size_t>(n) >= target.size()) {
      return InvalidArgumentError(Quoted(field) + "cannot read the symlink " + next);
    }
    target.resize(static_cast<size_t>(n));
    std::deque<std::string> parts = Components(target);
    todo.insert(todo.begin(), parts.begin(), parts.end());
    if (!target.empty() && target[0] == '/') done.clear();
  }
  w.path = done.empty() ? "/" : done;
  return w;
}

bool Within(const std::string& path, const std::string& folder) {
  if (folder == "/") return true;
  return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                            path[folder.size()] == '/');
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::vector<std::string> StoreFiles(const PathScope& scope) {
  if (scope.store_file.empty()) return {};
  return {scope.store_file, scope.store_file + "-wal", scope.store_file + "-shm",
          scope.store_file + "-journal"};
}

std::string StoreName(const PathScope& scope) {
  return fs::path(scope.store_file).filename().string();
}

// The store file "st" is, or "".
std::string StoreFileWithInode(const PathScope& scope, const struct stat& st) {
  for (const std::string& f : StoreFiles(scope)) {
    struct stat s {};
    if (::stat(f.c_str(), &s) == 0 && SameFile(s, st)) return f;
  }
  return "";
}

Status StoreFileRefusal(std::string_view field, const std::string& path, const std::string& same) {
  std::string message = Quoted(field) + path + " is the store's own file";
  if (!same.empty() && same != path) message += " (" + same + ")";
  return PermissionDeniedError(message + "; no caller may name it");
}

Status CheckNotStore(const PathScope& scope, std::string_view field, const std::string& given,
                     const std::string& path) {
  if (scope.store_file.empty()) return Status();
  const std::string shown = given == path ? path : given + " (" + path + ")";
  struct stat store_dir {};
  const bool have_dir = ::stat(scope.store_dir.c_str(), &store_dir) == 0;
  const std::string name = fs::path(path).filename().string();
  const std::string parent = Parent(path).empty() ? "/" : Parent(path);
  struct stat parent_st {};
  const bool beside_store = parent == scope.store_dir ||
                            (have_dir && ::stat(parent.c_str(), &parent_st) == 0 &&
                             SameFile(parent_st, store_dir));
  if (beside_store && name.rfind(StoreName(scope), 0) == 0) {
    return StoreFileRefusal(field, shown, "");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    const std::string same = StoreFileWithInode(scope, st);
    if (!same.empty()) return StoreFileRefusal(field, shown, same);
  }
  if (scope.store_dir_owned) {
    // By name, and by inode for each folder on the way (a bind mount of it).
    bool inside = Within(path, scope.store_dir);
    for (std::string at = path; !inside && have_dir && !at.empty(); at = Parent(at)) {
      struct stat at_st {};
      inside = ::stat(at.c_str(), &at_st) == 0 && SameFile(at_st, store_dir);
    }
    if (inside) {
      return PermissionDeniedError(Quoted(field) + shown + " is inside the store's folder " +
                                   scope.store_dir + ", which is baton's own; no caller may name it");
    }
  }
  return Status();
}

}  // namespace

Status CheckNoControlCharacters(std::string_view field, std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return InvalidArgumentError(Quoted(field) + "\"" + std::string(text.substr(0, i)) +
                                  "...\" holds the control character " + hex + " at byte " +
                                  std::to_string(i) + "; a path may hold none");
    }
  }
  return Status();
}

std::string PathScope::DefaultRoot(const std::string& store_location) {
  std::error_code ec;
  if (HasNoStoreFile(store_location)) {
    return fs::current_path(ec).string();
  }
  const fs::path folder = fs::absolute(store_location, ec).lexically_normal().parent_path();
  return (folder.filename() == ".baton" ? folder.parent_path() : folder).string();
}

Result<PathScope> PathScope::Make(const std::vector<std::string>& roots,
                                  const std::string& store_location) {
  PathScope scope;
  std::error_code ec;
  if (!HasNoStoreFile(store_location)) {
    const std::string abs = fs::absolute(store_location, ec).lexically_normal().string();
    RETURN_IF_ERROR(CheckNoControlCharacters("store", abs));
    ASSIGN_OR_RETURN(Walked w, Walk("store", abs));
    scope.store_file = w.path;
    scope.store_dir = Parent(w.path).empty() ? "/" : Parent(w.path);
    scope.store_dir_owned = fs::path(scope.store_dir).filename() == ".baton";
  }
  for (const std::string& root : roots) {
    RETURN_IF_ERROR(CheckNoControlCharacters("--root", root));
    const std::string abs = fs::absolute(root, ec).lexically_normal().string();
    ASSIGN_OR_RETURN(Walked w, Walk("--root", abs));
    if (!fs::is_directory(w.path, ec)) {
      return InvalidArgumentError("--root: " + root + " is not a folder");
    }
    scope.roots.push_back(w.path);
  }
  if (scope.roots.empty()) {
    // The project folder may not exist yet (the store is created on first
    // use); it is resolved all the same.
    ASSIGN_OR_RETURN(Walked w, Walk("root", DefaultRoot(store_location)));
    scope.roots.push_back(w.path);
  }
  return scope;
}

std::string PathScope::RootList() const {
  std::string out;
  for (const std::string& r : roots) out += (out.empty() ? "" : ", ") + r;
  return out;
}

Result<std::string> ResolveScopedPath(const PathScope& scope, const PathRequest& request) {
  const std::string_view field = request.field;
  const std::string given(request.path);
  if (given.empty()) return InvalidArgumentError(Quoted(field) + "an empty path names nothing");
  RETURN_IF_ERROR(CheckNoControlCharacters(field, given));
  std::string abs = given;
  if (given[0] != '/') {
    if (request.base.empty()) {
      return InvalidArgumentError(Quoted(field) + "\"" + given +
                                  "\" must be an absolute path (the CLI makes a relative one "
                                  "absolute)");
    }
    RETURN_IF_ERROR(CheckNoControlCharacters(field, request.base));
    abs = request.base + "/" + given;
  }
  ASSIGN_OR_RETURN(Walked w, Walk(field, abs));
  RETURN_IF_ERROR(CheckNotStore(scope, field, given, w.path));
  if (request.may_leave_roots) return w.path;
  for (const std::string& root : scope.roots) {
    if (Within(w.path, root)) return w.path;
  }
  const std::string shown = given == w.path ? given : given + " (" + w.path + ")";
  return PermissionDeniedError(Quoted(field) + shown + " is outside the roots " +
                               scope.RootList() + (w.climbed ? ", through \"..\"" : "") +
                               " (grant \"" + std::string(request.grant) + "\" needed)");
}

Result<int> OpenFolderNoFollow(const std::string& dir) {
  int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return InternalError(std::string("opening /: ") + std::strerror(errno));
  std::string at;
  for (const std::string& c : Components(dir)) {
    at += "/" + c;
    const int next = ::openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int saved = errno;
    if (next < 0) {
      struct stat st {};
      const bool link = ::fstatat(fd, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      ::close(fd);
      if (link) {
        return FailedPreconditionError("folder " + at + " of " + dir +
                                       " is now a symlink; nothing is written through it "
                                       "(bind the path again if it should be followed)");
      }
      return FailedPreconditionError("folder " + at + " of " + dir +
                                     " cannot be opened: " + std::strerror(saved));
    }
    ::close(fd);
    fd = next;
  }
  return fd;
}

Status CheckWriteTarget(const PathScope& scope, int dir_fd, const std::string& name,
                        const std::string& shown) {
  if (scope.store_file.empty()) return Status();
  struct stat dir {};
  struct stat store_dir {};
  if (::fstat(dir_fd, &dir) != 0) {
    return InternalError("fstat of the folder of " + shown + ": " + std::strerror(errno));
  }
  if (::stat(scope.store_dir.c_str(), &store_dir) == 0 && SameFile(dir, store_dir)) {
    if (scope.store_dir_owned) {
      return PermissionDeniedError("path: " + shown + " is inside the store's folder " +
                                   scope.store_dir + ", which is baton's own");
    }
    if (name.rfind(StoreName(scope), 0) == 0) return StoreFileRefusal("path", shown, "");
  }
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    const std::string same = StoreFileWithInode(scope, st);
    if (!same.empty()) return StoreFileRefusal("path", shown, same);
  }
  return Status();
}

}  // namespace baton
