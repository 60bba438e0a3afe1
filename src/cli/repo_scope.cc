#include "cli/repo_scope.h"

#include <fstream>

namespace baton {
namespace {

namespace fs = std::filesystem;

std::string Canonical(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

}  // namespace

std::string EnclosingRepository(const fs::path& dir) {
  std::error_code ec;
  const fs::path start = fs::absolute(dir, ec);
  if (ec) return "";
  for (fs::path at = start; !at.empty(); at = at.parent_path()) {
    const fs::path git = at / ".git";
    if (fs::is_directory(git, ec)) return Canonical(at);
    if (fs::is_regular_file(git, ec)) {
      std::ifstream in(git);
      std::string line;
      std::getline(in, line);
      const std::string prefix = "gitdir: ";
      if (line.rfind(prefix, 0) != 0) return Canonical(at);
      fs::path gitdir = line.substr(prefix.size());
      if (gitdir.is_relative()) gitdir = at / gitdir;
      // <main>/.git/worktrees/<name> -> <main>
      if (gitdir.parent_path().filename() == "worktrees") {
        return Canonical(gitdir.parent_path().parent_path().parent_path());
      }
      return Canonical(at);
    }
    if (at == at.root_path()) break;
  }
  return "";
}

std::string ProjectForRepository(const Json& projects, const std::string& repo) {
  for (const Json& p : projects.value("projects", Json::array())) {
    const Json& path = p["repo_path"];
    if (path.is_string() && Canonical(path.get<std::string>()) == repo) {
      return p["id"].get<std::string>();
    }
  }
  return "";
}

}  // namespace baton
