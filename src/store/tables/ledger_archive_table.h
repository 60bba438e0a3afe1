// File: ledger_archive_table.h
//
// The ledger_archives table: one row per `baton ledger archive`
// (engine/ledger/archive.h) — the range of events it moved out of the
// events table, the hash before its first event and of its last, the file
// that holds them and that file's SHA-256, and the seq of the
// "ledger.archived" event that recorded it in the chain. The row with the
// highest through_seq is the anchor the chain is verified from. Portable SQL
// (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_LEDGER_ARCHIVE_TABLE_H_
#define BATON_SRC_STORE_TABLES_LEDGER_ARCHIVE_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct LedgerArchiveRow {
  int64_t first_seq = 0;
  int64_t through_seq = 0;
  std::string prev_hash;     // the hash event first_seq links to
  std::string through_hash;  // event through_seq's hash
  std::string file;          // absolute path, as written
  std::string file_sha256;
  int64_t event_seq = 0;     // the ledger.archived event
  std::string created_at;
};

Status InsertLedgerArchiveRow(Txn& txn, const LedgerArchiveRow& row);

// The newest archive (the anchor); nullopt when none was made.
Result<std::optional<LedgerArchiveRow>> LoadNewestLedgerArchiveRow(Txn& txn);

// Every archive, oldest first.
Result<std::vector<LedgerArchiveRow>> ListLedgerArchiveRows(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_LEDGER_ARCHIVE_TABLE_H_
