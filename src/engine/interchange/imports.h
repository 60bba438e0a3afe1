// File: imports.h
//
// Moves runs in and out of the store as run images (docs/formats.md), the
// currency of the seed formats in formats/: import stores what a reader
// read, export gives a writer what to write, and mirrors keep a seed file
// up to date after each commit that touches its run.

#ifndef BATON_SRC_ENGINE_INTERCHANGE_IMPORTS_H_
#define BATON_SRC_ENGINE_INTERCHANGE_IMPORTS_H_

#ifndef BATON_ENGINE_ROOM_INTERCHANGE
#error "engine/interchange/ is above this target: link baton_engine_interchange (src/engine/README.md)"
#endif

#include <optional>
#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "formats/format.h"

namespace baton {

// The run's image: its row, tasks, messages, ledger events, decisions,
// sessions, hand-offs, usage and open questions. NotFound for an unknown run.
Result<RunImage> ExportImage(Txn& txn, const std::string& run_id);

struct ImportRequest {
  std::string format;   // the format that read it, for the ledger
  std::string source;   // the file's name as given
  std::string sha256;   // of the file's bytes
  std::string run_id;   // empty: a new run; else the run to update
  std::string project;  // a new run's project (id or name), optional
  std::vector<std::string> notes;  // what reading skipped or kept unread, for the result
};

// Stores "image" as a new run or over an existing one, in ctx.txn, with one
// run.imported event. Returns {run_id, created, counts{...}, notes[]}.
// InvalidArgument naming the image field for a status or kind the profile's
// machines do not know; FailedPrecondition when updating a run of another
// profile. Nothing is written when it fails (the caller's transaction rolls
// back).
Result<Json> ImportImage(OpContext& ctx, const RunImage& image, const ImportRequest& request);

// run.import / run.export / mirror.* operations.
// The most an import reads: a state file, and one Sinfonia envelope. A file
// over it is refused naming the file and its size (the CLI checks before it
// reads the file; run.import checks what it is given).
inline constexpr size_t kMaxImportBytes = size_t{32} << 20;
inline constexpr size_t kMaxEnvelopeBytes = size_t{1} << 20;
// Checks "size" bytes of "file" against "limit": InvalidArgument naming the
// file first, with both sizes.
Status CheckImportSize(const std::string& file, size_t size, size_t limit);

Result<Json> ImportRunOp(OpContext& ctx, const Json& in);
Result<Json> ExportRunOp(OpContext& ctx, const Json& in);
Result<Json> BindMirror(OpContext& ctx, const Json& in);
Result<Json> UnbindMirror(OpContext& ctx, const Json& in);
Result<Json> ListMirrors(OpContext& ctx, const Json& in);
Result<Json> ReportMirror(OpContext& ctx, const Json& in);

// Renders run "run_id" in "format": the file's text and the writer's notes.
Result<FormatOutput> RenderRun(Txn& txn, const std::string& run_id, const std::string& format);

// A mirror due after a commit.
struct MirrorTarget {
  std::string run_id;
  std::string path;
  std::string format;
  std::string last_error;  // empty when its last write succeeded
};

// The mirrors bound to any of "run_ids".
Result<std::vector<MirrorTarget>> MirrorsOf(Txn& txn, const std::vector<std::string>& run_ids);
// The mirror bound at "path" (as stored: lexically normal), if any.
Result<std::optional<MirrorTarget>> FindMirror(Txn& txn, const std::string& path);
// Every bound path.
Result<std::vector<std::string>> MirrorPaths(Txn& txn);
// The bound mirrors whose file is older than their run's newest event (its
// head, engine/ledger/witness.h, is before it, or it has none): a process
// stopped between a commit and the mirror's rewrite. Also those whose head
// this store did not write (MirrorHeadIsOurs).
Result<std::vector<MirrorTarget>> MirrorsBehind(Txn& txn);
// Whether the file at "path" carries a head (witness.h) this store wrote:
// the event at its seq has its hash. Another store's file, or one written
// before an accepted loss, does not — and says nothing of what it holds.
Result<bool> MirrorHeadIsOurs(Txn& txn, const std::string& path);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_INTERCHANGE_IMPORTS_H_
