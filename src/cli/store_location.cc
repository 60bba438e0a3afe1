#include "cli/store_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/cli.h"
#include "util/store_location.h"

namespace baton {
namespace fs = std::filesystem;
namespace {

// "--store PATH" or "BATON_STORE=PATH": how the user named the store.
std::string NamedAs(const GlobalOptions& g, const std::string& path) {
  return (g.store.empty() ? "BATON_STORE=" : "--store ") + RedactedLocation(path);
}

fs::path DefaultIn(const fs::path& folder) { return folder / kStoreFolder / kStoreFile; }

// A store found by walking up is used only when it is this user's: its
// folder and file owned by us and not writable by everyone. Otherwise anyone
// could plant /tmp/.baton/baton.db and become the store (and the delivery
// commands) of every user working below /tmp (as git's safe.directory).
bool OursToUse(const fs::path& store, std::string* why) {
  for (const fs::path& p : {store.parent_path(), store}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    if (st.st_uid != ::geteuid() || (st.st_mode & S_IWOTH) != 0) {
      *why = "skipped " + store.string() + ": " + p.string() +
             (st.st_uid != ::geteuid() ? " belongs to another user" : " is writable by anyone") +
             " (name it with --store to use it anyway)";
      return false;
    }
  }
  return true;
}

// The nearest store at or above "from" that is ours; "" when none.
std::string NearestStore(const fs::path& from, std::string* skipped) {
  std::error_code ec;
  for (fs::path dir = from; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(DefaultIn(dir), ec)) {
      std::string why;
      if (OursToUse(DefaultIn(dir), &why)) return DefaultIn(dir).string();
      if (skipped->empty()) *skipped = why;
    }
    if (dir == dir.parent_path()) break;
  }
  return "";
}

}  // namespace

StoreLocation LocateStore(const GlobalOptions& g) {
  StoreLocation loc;
  const char* env = std::getenv("BATON_STORE");
  loc.path = !g.store.empty() ? g.store : (env != nullptr ? env : "");
  std::error_code ec;
  if (!loc.path.empty()) {
    loc.named = true;
    loc.named_as = NamedAs(g, loc.path);
    // A database server's store is checked when it is opened.
    loc.exists = loc.path == ":memory:" || IsPostgresLocation(loc.path) ||
                 fs::is_regular_file(loc.path, ec);
    return loc;
  }
  const fs::path cwd = fs::current_path(ec);
  loc.path = NearestStore(cwd, &loc.skipped);
  loc.exists = !loc.path.empty();
  if (!loc.exists) loc.path = DefaultIn(cwd).string();
  return loc;
}

Status PrepareStore(StoreUse use, StoreLocation& loc) {
  if (loc.exists || use == StoreUse::kOptional) return Status();
  std::error_code ec;
  const fs::path path = fs::absolute(loc.path, ec);
  if (ec) return FailedPreconditionError("cannot resolve " + loc.path + ": " + ec.message());
  const fs::path folder = path.parent_path();
  if (loc.named && !fs::is_directory(folder, ec)) {
    return NotFoundError(loc.named_as + ": folder " + folder.string() + " does not exist");
  }
  if (use == StoreUse::kExisting) {
    if (loc.named) {
      return NotFoundError(loc.named_as + ": no baton store there (baton init --store " +
                           RedactedLocation(loc.path) + " makes one)");
    }
    return NotFoundError("no baton store in " + folder.parent_path().string() +
                         " or any folder above it: run baton init to make one here, or name "
                         "one with --store or BATON_STORE" +
                         (loc.skipped.empty() ? "" : " (" + loc.skipped + ")"));
  }
  if (loc.named) return Status();
  // The default place: ./.baton/, the one folder baton makes.
  if (!fs::is_directory(folder, ec)) {
    if (!fs::create_directory(folder, ec) && ec) {
      return FailedPreconditionError("cannot make " + folder.string() + ": " + ec.message());
    }
    // The store and its secret stay out of the project's commits.
    std::ofstream(folder / ".gitignore") << "# made by baton init: the store is not versioned\n*\n";
    loc.created = true;
  }
  return Status();
}

int RunInit(const GlobalOptions& g) {
  StoreLocation loc = LocateStore(g);
  std::string covering;  // a store above that this one will hide
  if (!loc.named) {
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (ec) return ReportError(FailedPreconditionError("the current folder: " + ec.message()), g.output);
    covering = loc.exists && loc.path != DefaultIn(cwd).string() ? loc.path : "";
    loc.path = DefaultIn(cwd).string();
    loc.exists = fs::is_regular_file(loc.path, ec);
  }
  const bool existed = loc.exists;
  Status prepared = PrepareStore(StoreUse::kCreate, loc);
  if (!prepared.ok()) return ReportError(prepared, g.output);
  Result<ApiOptions> options = ResolveApiOptions(g, /*group_commit=*/false, StoreUse::kCreate);
  if (!options.ok()) return ReportError(options.status(), g.output);
  options->store.location = loc.path;
  Result<std::unique_ptr<Api>> api = Api::Open(*options);
  Status opened = api.ok() ? (*api)->EnsureStore() : api.status();
  if (!opened.ok()) return ReportError(opened, g.output);
  std::error_code ec;
  const bool server = IsPostgresLocation(loc.path);
  const std::string where = loc.path == ":memory:" ? loc.path
                            : server               ? RedactedLocation(loc.path)
                                                   : fs::absolute(loc.path, ec).string();
  if (server) {
    // Made if the database had none: the same answer either way.
    if (g.output == "json") {
      std::cout << Json{{"store", where}, {"created", false}}.dump(2) << "\n";
    } else {
      std::cout << "The baton store in " << where << " is ready.\n";
    }
    return 0;
  }
  if (g.output == "json") {
    std::cout << Json{{"store", where}, {"created", !existed}}.dump(2) << "\n";
    return 0;
  }
  if (existed) {
    std::cout << "A baton store is already at " << where << "; nothing changed.\n";
    return 0;
  }
  std::cout << "Made a baton store at " << where << ".\n";
  if (!covering.empty()) {
    std::cerr << "baton: note: " << covering << " was the store here until now; commands in "
              << fs::path(where).parent_path().parent_path().string()
              << " and below use the new one\n";
  }
  if (!loc.named) {
    std::cout << "Commands run in " << fs::path(where).parent_path().parent_path().string()
              << " or any folder below it use this store.\n";
  } else {
    std::cout << "Name it in every command with --store " << where
              << " (or export BATON_STORE=" << where << ").\n";
  }
  std::cout << "Next:\n"
               "  baton serve                       the HTTP API and the human's dashboard\n"
               "  baton run create --title \"...\"    a run for your agents' work\n"
               "  baton mcp --agent coder           MCP on stdin/stdout, for an agent host\n"
               "                                    (claude mcp add baton -- baton mcp --agent coder)\n";
  return 0;
}

}  // namespace baton
