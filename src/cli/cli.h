// File: cli.h
//
// The `baton` command line. Every operation in the registry is a verb
// (`baton <group> <verb>`, e.g. `baton run set-status RUN STATUS`) with flags
// generated from its input schema; a few commands (serve, status, machines,
// ops, verify, log) are friendlier spellings of operations. Errors print the
// status code and message and exit with the code of error_table.h.

#ifndef BATON_SRC_CLI_CLI_H_
#define BATON_SRC_CLI_CLI_H_

#include <string>
#include <vector>

#include "ops/api.h"

namespace baton {

// Runs the command line; returns the process exit code.
int RunCli(int argc, char** argv);

// Options shared by every command.
struct GlobalOptions {
  std::string store;        // --store / BATON_STORE / .baton/baton.db
  std::string agent;        // --agent / BATON_AGENT
  std::string role;         // --role / BATON_ROLE
  std::string output = "text";
  std::string durability;   // --durability / BATON_DURABILITY / full
  std::vector<std::string> roots;  // --root (repeatable): where callers' paths may lead
};

// Resolves flags and environment into Api options and the caller.
Result<ApiOptions> ResolveApiOptions(const GlobalOptions& g, bool group_commit);
Result<Actor> ResolveActor(const GlobalOptions& g);

// Prints "result" as the command's output (JSON or text).
void PrintResult(const std::string& op, const Json& result, const std::string& output);
// Prints the error and returns the exit code for it.
int ReportError(const Status& status, const std::string& output);

// Renders an operation's result for people.
std::string RenderText(const std::string& op, const Json& result);

struct ServeOptions {
  std::string listen = "127.0.0.1:8321";
  // Agents silent this long are marked lost and their leases freed; 0: never.
  int64_t agent_timeout_ms = 300000;
  std::string auth = "none";                   // none (loopback only) or token
  std::vector<std::string> mcp_tools = {"baton"};  // /mcp's default tool sets
  std::vector<std::string> allowed_origins;    // besides loopback origins
};

// `baton serve`.
int RunServe(const GlobalOptions& g, const ServeOptions& options);

struct McpCommandOptions {
  std::vector<std::string> tool_sets = {"baton"};
  std::string run;  // --run / BATON_RUN: the run seed tool sets act on
  int64_t progress_interval_ms = 5000;
};

// `baton mcp` and the text of its --help.
extern const char kMcpHelp[];
int RunMcp(const GlobalOptions& g, const McpCommandOptions& options);

}  // namespace baton

#endif  // BATON_SRC_CLI_CLI_H_
