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

#include "cli/store_location.h"
#include "ops/api.h"

namespace baton {

// Runs the command line; returns the process exit code.
int RunCli(int argc, char** argv);

// Options shared by every command.
struct GlobalOptions {
  std::string store;        // --store / BATON_STORE / the nearest .baton/baton.db
  std::string agent;        // --agent / BATON_AGENT
  std::string role;         // --role / BATON_ROLE
  std::string output = "text";  // text, json, id, or .FIELD[.FIELD…] (one value)
  std::string durability;   // --durability / BATON_DURABILITY / full
  std::vector<std::string> roots;  // --root (repeatable): where callers' paths may lead
};

// Resolves flags and environment into Api options and the caller. The
// store is found (store_location.h) and must exist unless "use" says
// otherwise; a store made for kCreateIfNone is announced on stderr.
Result<ApiOptions> ResolveApiOptions(const GlobalOptions& g, bool group_commit,
                                     StoreUse use = StoreUse::kExisting);
Result<Actor> ResolveActor(const GlobalOptions& g);

// Checks an --output value: text, json, id or .FIELD (e.g. ".token",
// ".task.id"); "" when valid, else why not (CLI11's validator contract).
std::string CheckOutputFormat(const std::string& output);
// Prints "result" as the command's output: JSON, text, or one field's value
// ("id" is ".id"; a string bare, anything else as JSON) for shell variables.
// Returns the exit code: 0, or InvalidArgument's when the field is missing.
int PrintResult(const std::string& op, const Json& result, const std::string& output);
// Prints the error and returns the exit code for it.
int ReportError(const Status& status, const std::string& output);

// Renders an operation's result for people.
std::string RenderText(const std::string& op, const Json& result);
// "s" with control characters but newline and tab replaced by "?".
std::string Printable(const std::string& s);

// How often a long-lived process (serve, mcp) rewrites a mirror at most.
inline constexpr int kDefaultMirrorDelayMs = 200;

struct ServeOptions {
  std::string listen = "127.0.0.1:8321";
  // Agents silent this long are marked lost and their leases freed; 0: never.
  int64_t agent_timeout_ms = 300000;
  // token: callers prove who they are (the human's secret, agents' tokens);
  // none: headers are believed, loopback only, no grants (http/identity.h).
  std::string auth = "token";
  std::vector<std::string> mcp_tools = {"baton"};  // /mcp's default tool sets
  std::vector<std::string> allowed_origins;    // besides loopback origins
  // The HTTP front's limits (src/http/front.h, docs/security-http.md).
  int threads = 512;
  int reserve = 32;
  int max_connections = 4096;
  int max_per_peer = 1024;
  int64_t header_timeout_ms = 10000;
  int64_t body_timeout_ms = 60000;
  int64_t idle_timeout_ms = 60000;
  int64_t stop_grace_ms = 10000;
  int64_t max_body = 4 << 20;
  int64_t max_header_bytes = 64 << 10;
  // The dashboard (http/dashboard.h) and its event streams.
  std::string ui_dir;  // "": the files compiled in
  int max_event_streams = 32;
  int64_t event_heartbeat_ms = 15000;
  // Each seed-file mirror is rewritten at most once per this many ms
  // (ApiOptions::mirror_delay_ms; `baton mcp` uses the default).
  int mirror_delay_ms = kDefaultMirrorDelayMs;
  // Run for each item that starts needing the human (ops/notifier.h).
  std::string notify_command;
  // The human's secret: this file (made on first use, mode 0600) instead of
  // the one beside the store; "" for the store's own (HumanSecretPath). The
  // servers of one PostgreSQL store share one this way (docs/postgres.md).
  std::string secret_file;
};

}  // namespace baton
namespace CLI {
class App;
}  // namespace CLI
namespace baton {

// `baton serve`'s flags for the HTTP front's limits (serve.cc).
void AddServeLimitFlags(CLI::App& serve, ServeOptions& options);

// `baton serve`.
int RunServe(const GlobalOptions& g, const ServeOptions& options);

// The human's start-up link of a server on "host":"port":
// http://HOST:PORT/#token=SECRET (just the address when "secret" is ""). The
// secret rides in the fragment, which browsers never send to a server, so it
// stays out of request lines, server logs and Referer headers; the
// dashboard reads it from location.hash.
std::string DashboardLink(const std::string& host, int port, const std::string& secret);

// `baton url [--listen host:port]`: prints the human's link to the server of
// the store, making the store's secret first if there is none.
int RunUrl(const GlobalOptions& g, const std::string& listen, const std::string& secret_file);
// Where the human's secret of "store_location" is kept: "flag" when named
// (--secret-file), else beside the store; "" for a store with no file of its
// own, whose secret lives as long as the process.
std::string HumanSecretFile(const std::string& store_location, const std::string& flag);

struct McpCommandOptions {
  std::vector<std::string> tool_sets = {"baton"};
  std::string run;  // --run / BATON_RUN: the run seed tool sets act on
  int64_t progress_interval_ms = 5000;
  // What the agent served may do beyond its role (model/actor.h); none
  // unless named with --grant.
  std::vector<std::string> grants;
};

// `baton mcp` and the text of its --help.
extern const char kMcpHelp[];
int RunMcp(const GlobalOptions& g, const McpCommandOptions& options);

}  // namespace baton

#endif  // BATON_SRC_CLI_CLI_H_
