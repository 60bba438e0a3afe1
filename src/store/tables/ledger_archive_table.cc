#include "store/tables/ledger_archive_table.h"

namespace baton {
namespace {

// A row of the columns in the order every statement here reads them.
LedgerArchiveRow FromRow(const Row& r) {
  return {.first_seq = r.Int(0),
          .through_seq = r.Int(1),
          .prev_hash = r.Str(2),
          .through_hash = r.Str(3),
          .file = r.Str(4),
          .file_sha256 = r.Str(5),
          .event_seq = r.Int(6),
          .created_at = r.Str(7)};
}

}  // namespace

Status InsertLedgerArchiveRow(Txn& txn, const LedgerArchiveRow& row) {
  return txn.Exec("INSERT INTO ledger_archives (first_seq, through_seq, prev_hash, through_hash, "
                  "file, file_sha256, event_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  {SqlInt(row.first_seq), SqlInt(row.through_seq), SqlText(row.prev_hash),
                   SqlText(row.through_hash), SqlText(row.file), SqlText(row.file_sha256),
                   SqlInt(row.event_seq), SqlText(row.created_at)})
      .status();
}

Result<std::optional<LedgerArchiveRow>> LoadNewestLedgerArchiveRow(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT first_seq, through_seq, prev_hash, through_hash, file, "
                             "file_sha256, event_seq, created_at FROM ledger_archives "
                             "ORDER BY through_seq DESC LIMIT 1",
                             {}));
  if (rows.empty()) return std::optional<LedgerArchiveRow>();
  return std::optional<LedgerArchiveRow>(FromRow(rows[0]));
}

Result<std::vector<LedgerArchiveRow>> ListLedgerArchiveRows(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT first_seq, through_seq, prev_hash, through_hash, file, "
                             "file_sha256, event_seq, created_at FROM ledger_archives "
                             "ORDER BY through_seq",
                             {}));
  std::vector<LedgerArchiveRow> out;
  for (const Row& r : rows) out.push_back(FromRow(r));
  return out;
}

}  // namespace baton
