// File: repo_scope.h
//
// A CLI call made inside a repository scopes itself to that repository's
// project (issue #3): operations that take a "project" get the project whose
// repo_path is the enclosing repository, unless the caller named one.

#ifndef BATON_SRC_CLI_REPO_SCOPE_H_
#define BATON_SRC_CLI_REPO_SCOPE_H_

#include <filesystem>
#include <string>

#include "util/json_util.h"

namespace baton {

// The repository "dir" is in: the nearest folder upwards holding ".git". In
// a linked worktree or a `git clone --shared` team clone the ".git" is its own;
// a worktree's ".git" file ("gitdir: <main>/.git/worktrees/<name>") leads to
// the main repository, so all worktrees share one project. Empty if none.
std::string EnclosingRepository(const std::filesystem::path& dir);

// The id of the project in "projects" (project.list output) whose repo_path
// is "repo", or empty.
std::string ProjectForRepository(const Json& projects, const std::string& repo);

}  // namespace baton

#endif  // BATON_SRC_CLI_REPO_SCOPE_H_
