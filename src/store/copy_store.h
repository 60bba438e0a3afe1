// File: copy_store.h
//
// Copies every row of a SQLite store into an empty store of the same schema
// version on another backend (`baton store migrate`, ops/system_ops.cc), in
// one write transaction on the target: a failure anywhere leaves the target
// as empty as it was.

#ifndef BATON_SRC_STORE_COPY_STORE_H_
#define BATON_SRC_STORE_COPY_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct CopiedTable {
  std::string name;
  int64_t rows = 0;
};

struct CopyReport {
  std::vector<CopiedTable> tables;  // in the order they were copied
  int64_t rows = 0;
};

// Copies "from" (a SQLite store) into "to", which must hold no rows and have
// the same schema version. Each table goes after the tables it refers to,
// and a column referring to its own table's rows is set once all of them
// are there, so PostgreSQL's reference checks hold at every INSERT; a table
// is read in rowid order a page at a time and written in multi-row INSERTs. Identity columns go on
// after the highest id copied. Each table's count on the target is checked
// against the source's, then "check" runs on both transactions (the
// ledger's chain walk), and only then does the target commit.
using CopyCheck = std::function<Status(Txn& source, Txn& target)>;
Result<CopyReport> CopyStore(Store& from, Store& to, const CopyCheck& check);

}  // namespace baton

#endif  // BATON_SRC_STORE_COPY_STORE_H_
