// File: mirror_table.h
//
// The mirrors table: seed files bound to a run, each rewritten in its
// format after every commit that touches the run (engine/interchange/
// mirrors.cc), with how its last write went. A path is stored lexically
// normal, one row per file. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_MIRROR_TABLE_H_
#define BATON_SRC_STORE_TABLES_MIRROR_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/tables/run_table.h"

namespace baton {

struct MirrorRow {
  std::string path;
  std::string run_id;
  std::string format;
  std::optional<std::string> last_error;  // none when its last write succeeded
  std::optional<std::string> failed_at;
  std::string created_at;
};

// The mirror bound at "path", if any.
Result<std::optional<MirrorRow>> LoadMirrorRow(Txn& txn, const std::string& path);

// Run "run_id"'s mirrors; only the one at "path" when it is set.
Result<std::vector<MirrorRow>> ListRunMirrorRows(Txn& txn, const std::string& run_id,
                                                 const std::optional<std::string>& path);

// Every mirror (only run "run_id"'s when it is set), by creation, then path;
// at most "limit" when it is set.
Result<std::vector<MirrorRow>> ListMirrorRows(Txn& txn, const std::optional<std::string>& run_id,
                                              std::optional<int64_t> limit = std::nullopt);

// The mirrors bound to any of "run_ids", by path.
Result<std::vector<MirrorRow>> ListMirrorRowsOfRuns(Txn& txn,
                                                    const std::vector<std::string>& run_ids);

// Every bound path, in order.
Result<std::vector<std::string>> ListMirrorPaths(Txn& txn);

// Binds "path" to run "run_id" in "format" (created at "now"); a path
// already bound keeps its run and creation, takes "format", and its error
// is cleared.
Status UpsertMirrorRow(Txn& txn, const std::string& path, const std::string& run_id,
                       const std::string& format, const std::string& now);

Status DeleteMirrorRow(Txn& txn, const std::string& path);

// The mirror at "path" was written: no error.
Status ClearMirrorError(Txn& txn, const std::string& path);

// The mirror at "path" failed with "error" at "failed_at".
Status SetMirrorError(Txn& txn, const std::string& path, const std::string& error,
                      const std::string& failed_at);

// inbox.list: the mirrors whose last write failed, with their run, by
// failure time, within "scope".
struct FailedMirrorItem {
  std::string path;
  std::string format;
  std::string last_error;
  std::string failed_at;
  std::optional<RunLabel> run;
};
Result<std::vector<FailedMirrorItem>> ListFailedMirrorsForInbox(Txn& txn, const InboxScope& scope);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_MIRROR_TABLE_H_
