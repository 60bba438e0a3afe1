// File: error_table.h
//
// The one table that says what each StatusCode becomes at each edge: the CLI's
// exit code, the HTTP status, and the JSON-RPC error code used when a failure is
// a protocol error rather than a tool result. See docs/impl.md "Errors".

#ifndef BATON_INCLUDE_BATON_ERROR_TABLE_H_
#define BATON_INCLUDE_BATON_ERROR_TABLE_H_

#include <span>

#include "baton/status.h"

namespace baton {

struct ErrorMapping {
  StatusCode code;
  const char* name;   // StatusCodeName(code)
  int exit_code;      // CLI process exit status
  int http_status;    // HTTP response status
  int jsonrpc_code;   // JSON-RPC 2.0 error code
  const char* advice; // what the caller should do, one line
};

// One row per StatusCode, in enum order.
std::span<const ErrorMapping> ErrorTable();
const ErrorMapping& MappingFor(StatusCode code);

// A failure's HTTP status: the table's, except that a store that ran out of
// space (ResourceExhausted with details.reason "storage_full") is 507
// Insufficient Storage, not the 429 that clients read as rate limiting.
int HttpStatusFor(const Status& status);
inline constexpr char kStorageFull[] = "storage_full";

// Exit code used when the command line itself cannot be parsed.
inline constexpr int kUsageExitCode = 2;

// Exit code of a command that worked but whose run ended failed (`baton
// graph run` / `graph resume` of a run that failed): distinct from every
// error's code above.
inline constexpr int kRunFailedExitCode = 20;

// Exit code of a lint that worked and found violations (`baton wish lint`),
// as linters do; 0 when the file is clean.
inline constexpr int kLintFoundViolationsExitCode = 21;

}  // namespace baton

#endif  // BATON_INCLUDE_BATON_ERROR_TABLE_H_
