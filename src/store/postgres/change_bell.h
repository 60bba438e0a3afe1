// File: change_bell.h
//
// PostgreSQL's ChangeBell (store.h): LISTEN and NOTIFY on the channel
// "baton_change" of the store's database, on a connection of the bell's
// own. A ring is one pg_notify outside any transaction, carrying the ledger
// head as text; the server delivers it to every other session listening on
// that database, in commit order, and drops it for a session that is gone
// (the listener's fallback poll covers that).

#ifndef BATON_SRC_STORE_POSTGRES_CHANGE_BELL_H_
#define BATON_SRC_STORE_POSTGRES_CHANGE_BELL_H_

#include <memory>

#include "store/postgres/pg_client.h"
#include "store/store.h"

namespace baton {

// Starts listening on "session", which the bell then owns: channel
// "baton_change", which every baton process on a database listens on.
Result<std::unique_ptr<ChangeBell>> OpenPostgresChangeBell(std::unique_ptr<PgSession> session);

}  // namespace baton

#endif  // BATON_SRC_STORE_POSTGRES_CHANGE_BELL_H_
