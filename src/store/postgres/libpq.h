// File: libpq.h
//
// libpq, loaded when a PostgreSQL store is first opened. Linked, it would be
// mapped into every `baton` process: with what it brings (Kerberos, LDAP,
// GnuTLS: 28 libraries) it cost a command on a SQLite store 2.4 ms of its
// ~12 ms (issue 21 item 4, docs/benchmarks.md). The backend calls libpq
// through Pq(), a table of its functions filled by dlopen and dlsym:
//
//   RETURN_IF_ERROR(LoadLibpq());          // once, before the first connection
//   PGconn* conn = Pq().PQconnectdbParams(keys, values, 1);

#ifndef BATON_SRC_STORE_POSTGRES_LIBPQ_H_
#define BATON_SRC_STORE_POSTGRES_LIBPQ_H_

#include <libpq-fe.h>

#include "baton/status.h"

namespace baton {

// Every libpq function the backend calls.
#define BATON_LIBPQ_FUNCTIONS(X)                                                               \
  X(PQbackendPID) X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconnectdbParams)                \
  X(PQconsumeInput) X(PQenterPipelineMode) X(PQerrorMessage) X(PQexec) X(PQexecPrepared)       \
  X(PQexitPipelineMode) X(PQfinish) X(PQfreemem) X(PQftype) X(PQgetisnull) X(PQgetlength)      \
  X(PQgetResult) X(PQgetvalue) X(PQnfields) X(PQnotifies) X(PQntuples) X(PQpipelineSync)       \
  X(PQprepare) X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus)                 \
  X(PQsendQueryParams) X(PQsendQueryPrepared) X(PQserverVersion) X(PQsetNoticeProcessor)       \
  X(PQsocket) X(PQstatus) X(PQtransactionStatus)

struct Libpq {
#define BATON_LIBPQ_MEMBER(name) decltype(&::name) name = nullptr;
  BATON_LIBPQ_FUNCTIONS(BATON_LIBPQ_MEMBER)
#undef BATON_LIBPQ_MEMBER
};

// Loads libpq (libpq.so.5) and its functions, once per process; later calls
// answer the first one's outcome. FailedPrecondition naming the library and
// what the loader said when it cannot (libpq5 not installed).
Status LoadLibpq();

// The functions; only after LoadLibpq() succeeded.
const Libpq& Pq();

}  // namespace baton

#endif  // BATON_SRC_STORE_POSTGRES_LIBPQ_H_
