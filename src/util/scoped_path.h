// File: scoped_path.h
//
// The one resolver for paths a caller names (docs/security-paths.md): a
// mirror file, a graph run's workdir, state_dir and node cwd, a team's repo
// and worktree root, an sgai workdir or GOAL.md, a Sinfonia workflow folder.
//
// ResolveScopedPath turns the caller's text into one absolute path with no
// symlink in it, and refuses it
//   - when it holds a NUL or another control character (InvalidArgument:
//     the filesystem calls would see a different, shorter path);
//   - when it is relative and the request names no base (InvalidArgument);
//   - when it is, or would be, one of the store's files — the database, its
//     -wal, -shm and -journal, any file beside it whose name begins with the
//     database's name, and anything inside the store's folder when baton owns
//     that folder (".baton") — whatever the spelling: compared by (st_dev,
//     st_ino) where the file exists, by resolved path otherwise
//     (PermissionDenied, for every caller);
//   - when it is outside every root and the caller may not leave them
//     (PermissionDenied naming the roots and the grant "paths").
// Symlinks are resolved as the kernel would: each existing component is
// looked at in turn, a symlink's target replaces it; past the deepest
// existing folder the rest is taken lexically. Messages name the field, the
// path and the rule.
//
// Resolving happens when the path is named; a folder may be swapped for a
// symlink afterwards. Writers that come back to a path later (mirrors) open
// its folder again with OpenFolderNoFollow and check the target with
// CheckWriteTarget before writing inside it by file descriptor.
//
// Thread-safe: everything here reads the filesystem and a const PathScope.

#ifndef BATON_SRC_UTIL_SCOPED_PATH_H_
#define BATON_SRC_UTIL_SCOPED_PATH_H_

#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"

namespace baton {

// What a server lets callers name: its roots and the store it guards.
struct PathScope {
  std::vector<std::string> roots;  // absolute, resolved; never empty once made
  std::string store_file;          // absolute, resolved; "" for a memory store
  std::string store_dir;           // its folder; "" for a memory store
  bool store_dir_owned = false;    // store_dir is baton's own (".baton"): no path in it

  // The scope for a store at "store_location" (":memory:" or a file path)
  // and the roots given ("--root"; relative ones start at the current
  // folder). No roots: DefaultRoots. InvalidArgument naming the root that
  // does not exist or is not a folder.
  static Result<PathScope> Make(const std::vector<std::string>& roots,
                                const std::string& store_location);
  // The project folder: the parent of the store's folder when that folder is
  // named ".baton", else the store's folder; the current folder for a memory
  // store.
  static std::string DefaultRoot(const std::string& store_location);

  // "/a, /b" for messages.
  std::string RootList() const;
};

struct PathRequest {
  std::string_view field;        // the input field, for messages: "path"
  std::string_view path;         // as the caller gave it
  std::string base;              // "" : a relative path is refused
  bool may_leave_roots = false;  // the caller holds the grant "paths"
  // The grant a refusal says would let the caller leave the roots.
  std::string_view grant = "paths";
};

// The resolved absolute path, or the refusal (see the file comment).
Result<std::string> ResolveScopedPath(const PathScope& scope, const PathRequest& request);

// InvalidArgument naming "field" when "text" holds a NUL or another control
// character (bytes below 0x20 and 0x7f).
Status CheckNoControlCharacters(std::string_view field, std::string_view text);

// Opens folder "dir" (absolute) for openat/renameat, refusing when any of its
// components is now a symlink (FailedPrecondition naming it) or it does not
// exist. The caller closes the descriptor.
Result<int> OpenFolderNoFollow(const std::string& dir);

// Before writing "name" inside the folder open as "dir_fd" ("shown" is the
// full path, for messages): PermissionDenied when the folder is the store's
// own or "name" is — or is a hard link to — one of the store's files.
Status CheckWriteTarget(const PathScope& scope, int dir_fd, const std::string& name,
                        const std::string& shown);

}  // namespace baton

#endif  // BATON_SRC_UTIL_SCOPED_PATH_H_
