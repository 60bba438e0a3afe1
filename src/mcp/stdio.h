// File: stdio.h
//
// `baton mcp`: the MCP stdio transport. Newline-delimited JSON-RPC messages
// on "in_fd", answers and notifications on "out_fd" (nothing else is ever
// written there; diagnostics go to stderr). Each request runs on a worker
// thread, so a tool call that waits for a human does not hold up pings,
// other calls or cancellations. A line that is not JSON gets a -32700
// error, one that is not a JSON-RPC message -32600, one longer than
// McpOptions::max_message_bytes a -32600 error without being buffered; the
// server keeps serving after each. When "in_fd" reaches end of file the
// requests in flight are cancelled (their questions stay open in the store)
// and ServeStdio returns.

#ifndef BATON_SRC_MCP_STDIO_H_
#define BATON_SRC_MCP_STDIO_H_

#include "mcp/session.h"

namespace baton::mcp {

void ServeStdio(McpServer& server, const Actor& actor, int in_fd, int out_fd);

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_STDIO_H_
