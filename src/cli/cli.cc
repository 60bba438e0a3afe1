#include "cli/cli.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>

#include "baton/error_table.h"
#include "cli/completion.h"
#include "cli/suggest.h"
#include "cli/verbs.h"
#include "util/subprocess.h"

namespace baton {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// The value "--output id" or "--output .a.b" names in an operation's result
// (null when a field on the way is null). "id" is the result's id, else the
// id of the task, run or question it carries (task.claim, sgai.start), else
// the run it made (run.import, wish.create).
Result<const Json*> OutputField(const std::string& op, const Json& result,
                                const std::string& output) {
  std::string path = output;
  if (output == "id") {
    path = ".id";
    for (const char* candidate : {".id", ".task.id", ".run.id", ".question.id", ".run_id"}) {
      const std::string top = std::string(candidate).substr(1, std::string(candidate).find('.', 1) - 1);
      if (!result.is_object() || !result.contains(top)) continue;
      // A record (or none), not a key that names one by its id.
      const bool wraps = std::string(candidate).ends_with(".id") && top != "id";
      if (wraps && !result[top].is_object() && !result[top].is_null()) continue;
      path = candidate;
      break;
    }
  }
  const Json* at = &result;
  std::string walked;
  for (size_t start = 1; start <= path.size() && !at->is_null();) {
    size_t end = path.find('.', start);
    if (end == std::string::npos) end = path.size();
    const std::string key = path.substr(start, end - start);
    walked += "." + key;
    if (!at->is_object() || !at->contains(key)) {
      std::string fields;
      if (at->is_object()) {
        for (auto it = at->begin(); it != at->end(); ++it) {
          fields += (fields.empty() ? " (it has ." : ", .") + it.key();
        }
        if (!fields.empty()) fields += ")";
      }
      return InvalidArgumentError("--output " + output + ": " + op + " was done, but its result has no " +
                                  walked + fields);
    }
    at = &(*at)[key];
    start = end + 1;
  }
  return at;
}

// Api::FlushMirrors in a `baton` of its own, for the large mirrors one
// command's write made due. "--store=PATH": a path starting with '-' stays a
// value. (No --root: a mirror is written where it was bound.)
std::function<Status()> BackgroundFlush(const GlobalOptions& g, const std::string& store) {
  std::vector<std::string> argv = {"baton", "--store=" + store};
  if (!g.durability.empty()) argv.push_back("--durability=" + g.durability);
  argv.push_back("flush-mirrors");
  argv.push_back("--background");
  return [argv] { return SpawnDetached("/proc/self/exe", argv); };
}

}  // namespace

Result<ApiOptions> ResolveApiOptions(const GlobalOptions& g, bool group_commit, StoreUse use) {
  ApiOptions options;
  StoreLocation loc = LocateStore(g);
  RETURN_IF_ERROR(PrepareStore(use, loc));
  if (!loc.exists && use == StoreUse::kCreateIfNone) {
    std::cerr << "baton: no store found; making a new one at " << loc.path << "\n";
  }
  options.store.location = loc.path;
  options.store.create_if_missing = use == StoreUse::kCreate || use == StoreUse::kCreateIfNone;
  std::string durability = !g.durability.empty() ? g.durability : Env("BATON_DURABILITY");
  if (!durability.empty()) {
    ASSIGN_OR_RETURN(options.store.durability, ParseDurability(durability));
  }
  options.group_commit = group_commit;
  options.roots = g.roots;
  // The hand-off's lock lives beside a store file (Api::FlushMirrors).
  if (!group_commit && !HasNoStoreFile(loc.path)) {
    options.start_background_flush = BackgroundFlush(g, loc.path);
  }
  options.registry = CommandEnv::SharedRegistry();
  // A server (group commit: serve, mcp) serves every operation: all of
  // them built at start, then found without the registry's lock.
  if (group_commit) RETURN_IF_ERROR(options.registry->Complete());
  return options;
}

Result<Actor> ResolveActor(const GlobalOptions& g) {
  Actor actor = LocalHumanActor();
  std::string agent = !g.agent.empty() ? g.agent : Env("BATON_AGENT");
  std::string role = !g.role.empty() ? g.role : Env("BATON_ROLE");
  if (!agent.empty()) {
    actor.id = agent;
    // An agent named on the command line is an agent unless told otherwise.
    actor.role = "agent";
  }
  if (!role.empty()) actor.role = role;
  RETURN_IF_ERROR(CheckRole(actor.role).WithPrefix("--role"));
  return actor;
}

std::string CheckOutputFormat(const std::string& output) {
  if (output == "text" || output == "json" || output == "id") return "";
  if (output.size() > 1 && output[0] == '.' && output.back() != '.' &&
      output.find("..") == std::string::npos) {
    return "";
  }
  return "expected text, json, id or .FIELD (a field of the result, e.g. .token)";
}

int PrintResult(const std::string& op, const Json& result, const std::string& output) {
  if (output == "json") {
    std::cout << result.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  } else if (output == "text") {
    // What agents wrote reaches the human's terminal: no escape sequences.
    std::cout << Printable(RenderText(op, result));
  } else {
    Result<const Json*> field = OutputField(op, result, output);
    if (!field.ok()) return ReportError(field.status(), "text");
    const Json* at = *field;
    // A terminal sees no escape sequences; a pipe or a file gets the value
    // as it is (a script's variable).
    const bool tty = isatty(STDOUT_FILENO) == 1;
    if (at->is_string()) {
      std::cout << (tty ? Printable(at->get<std::string>()) : at->get<std::string>()) << "\n";
    } else if (at->is_null()) {
      std::cout << "\n";  // nothing (task.claim that claimed none): an empty variable
    } else {
      const std::string json = at->dump(-1, ' ', false, Json::error_handler_t::replace);
      std::cout << (tty ? Printable(json) : json) << "\n";
    }
  }
  std::cout.flush();
  return 0;
}

int ReportError(const Status& status, const std::string& output) {
  const ErrorMapping& m = MappingFor(status.code());
  if (output == "json") {
    std::cout << Json{{"error", status.ToJson()}}.dump(2) << "\n";
  } else {
    std::cerr << "baton: " << m.name << ": " << Printable(status.message()) << "\n";
  }
  return m.exit_code;
}

namespace {

// Where the hand-written commands' flags land; lives as long as RunCli.
struct FixedArgs {
  ServeOptions serve;
  McpCommandOptions mcp;
  std::string url_listen = "127.0.0.1:8321";
  std::string url_secret_file;
  std::string machine;
  std::string format = "text";
  std::string op;
  LogFilter log;
  TransferArgs transfer;
  bool verify_deep = false;
  int64_t verify_since = 0;
  std::string verify_since_hash;
  std::string verify_archive;
  bool flush_background = false;
};

constexpr const char* kSecretFileHelp =
    "keep the human's secret in this file (made on first use, mode 0600) instead of beside the "
    "store; give every server of one PostgreSQL store the same file";

// Registers the hand-written commands; each sets "run" when chosen.
void AddFixedCommands(CLI::App& app, GlobalOptions& g, std::function<int()>& run,
                      CommandEnv& env, FixedArgs& args) {
  auto* serve = app.add_subcommand("serve", "Run the server: HTTP API on 127.0.0.1 over the store");
  ServeOptions* serve_options = &args.serve;
  serve->add_option("--listen", serve_options->listen,
                    "host:port to listen on (port 0 picks a free one)")
      ->capture_default_str();
  serve->add_option("--agent-timeout-ms", serve_options->agent_timeout_ms,
                    "mark agents without a heartbeat for this long lost and free their "
                    "tasks (0: never)")
      ->capture_default_str();
  serve->add_option("--auth", serve_options->auth,
                    "token: callers prove who they are (the human's link, printed at start and "
                    "by baton url; agents' tokens from baton token create); none: callers are "
                    "whoever their headers say, loopback only, no grants (for tests)")
      ->capture_default_str()
      ->check(CLI::IsMember({"token", "none"}));
  serve->add_option("--tools", serve_options->mcp_tools,
                    "MCP tool sets of /mcp: baton (each role's own), all, sgai, genie "
                    "(/mcp?tools=... picks others)")
      ->delimiter(',');
  serve->add_option("--allow-origin", serve_options->allowed_origins,
                    "an Origin besides loopback ones that may call the server");
  serve->add_option("--secret-file", serve_options->secret_file, kSecretFileHelp);
  AddServeLimitFlags(*serve, *serve_options);
  serve->callback([&run, &g, serve_options] {
    run = [&g, serve_options] { return RunServe(g, *serve_options); };
  });

  auto* mcp = app.add_subcommand("mcp", "Serve MCP on stdin/stdout for an agent host (see baton mcp --help)");
  mcp->footer(kMcpHelp);
  McpCommandOptions* mcp_options = &args.mcp;
  mcp->add_option("--tools", mcp_options->tool_sets,
                  "tool sets: baton (the tools of the caller's role's work), all (every "
                  "operation), sgai, genie (default baton)")
      ->delimiter(',');
  mcp->add_option("--run", mcp_options->run, "the run sgai's tools act on (default $BATON_RUN, "
                                             "else the newest sgai run not complete)");
  mcp->add_option("--progress-interval-ms", mcp_options->progress_interval_ms,
                  "progress notifications while a call waits for a human")
      ->capture_default_str();
  mcp->add_option("--grant", mcp_options->grants,
                  "what the agent may do beyond its role (repeat): commands, definitions, paths "
                  "(default none)")
      ->check(CLI::IsMember({"commands", "definitions", "paths"}));
  mcp->callback([&run, &g, mcp_options] {
    run = [&g, mcp_options] { return RunMcp(g, *mcp_options); };
  });

  auto* url = app.add_subcommand("url", "Print the human's link to baton serve (it carries the "
                                        "store's secret: keep it private)");
  std::string* url_listen = &args.url_listen;
  url->add_option("--listen", *url_listen, "the server's host:port")->capture_default_str();
  std::string* url_secret_file = &args.url_secret_file;
  url->add_option("--secret-file", *url_secret_file, kSecretFileHelp);
  url->callback([&run, &g, url_listen, url_secret_file] {
    run = [&g, url_listen, url_secret_file] { return RunUrl(g, *url_listen, *url_secret_file); };
  });

  auto* init = app.add_subcommand("init", "Make a store in ./.baton/ (or at --store) and say what to do next");
  init->callback([&run, &g] { run = [&g] { return RunInit(g); }; });

  auto* status = app.add_subcommand("status", "Show the store, its durability, counts and active runs");
  status->callback([&run, &env] { run = [&env] { return env.CallAndPrint("store.status", Json::object()); }; });

  auto* machines = app.add_subcommand("machines", "List state machines, or show one");
  auto* mname = &args.machine;
  auto* format = &args.format;
  machines->add_option("name", *mname, "machine to show, e.g. sgai.run");
  machines->add_option("--format", *format, "text, json or mermaid")
      ->check(CLI::IsMember({"text", "json", "mermaid"}));
  machines->callback([&run, &env, mname, format] {
    run = [&env, mname, format] { return env.ShowMachines(*mname, *format); };
  });

  auto* ops = app.add_subcommand("ops", "List operations with their schemas, or show one");
  auto* oname = &args.op;
  ops->add_option("name", *oname, "operation, e.g. run.set_status");
  ops->callback([&run, &env, oname] { run = [&env, oname] { return env.ShowOps(*oname); }; });

  auto* verify = app.add_subcommand("verify", "Check the store (SQLite's quick_check, the hash chain, the witness of its head); non-zero exit naming what is wrong");
  auto* deep = &args.verify_deep;
  verify->add_flag("--deep", *deep, "also SQLite's integrity_check, and every run, task, lease, agent and token row against the ledger");
  auto* since = &args.verify_since;
  auto* since_hash = &args.verify_since_hash;
  CLI::Option* since_given = verify->add_option("--since", *since, "walk the chain only after this seq (the events a verify that passed counted)");
  verify->add_option("--since-hash", *since_hash, "the head_hash that verify answered: seq --since must still have it");
  auto* archive = &args.verify_archive;
  verify->add_option("--archive", *archive, "prove this archive file (`baton ledger archive` wrote it) instead of the store");
  verify->callback([&run, &env, deep, since, since_given, since_hash, archive] {
    run = [&env, deep, since, since_given, since_hash, archive] {
      Json in = {{"deep", *deep}};
      if (since_given->count() > 0) in["since"] = *since;
      if (!since_hash->empty()) in["since_hash"] = *since_hash;
      if (!archive->empty()) {
        std::error_code ec;
        in["archive"] = std::filesystem::absolute(*archive, ec).lexically_normal().string();
      }
      return env.CallAndPrint("ledger.verify", in);
    };
  });

  auto* flush = app.add_subcommand(
      "flush-mirrors", "Rewrite every mirror whose file is behind its run, and wait for one "
                       "another command left to a background rewrite");
  auto* flush_background = &args.flush_background;
  flush->add_flag("--background", *flush_background,
                  "do nothing when another flush is already waiting (how commands hand off)")
      ->group("");
  flush->callback([&run, &env, flush_background] {
    run = [&env, flush_background] { return env.FlushMirrors(*flush_background); };
  });

  auto* log = app.add_subcommand("log", "Show ledger events");
  auto* filter = &args.log;
  log->add_option("--run", filter->run, "only events of this run");
  log->add_option("--kind", filter->kind, "event kind, or a prefix ending in '.'");
  log->add_option("--since", filter->since, "only events after this seq");
  log->add_option("--limit", filter->limit, "at most this many events");
  log->add_flag("--follow,-f", filter->follow, "keep printing new events until interrupted");
  log->callback([&run, &env, filter] { run = [&env, filter] { return env.Log(*filter); }; });

  TransferArgs* t = &args.transfer;
  auto* import = app.add_subcommand(
      "import", "Create a run from a seed system's state file, or update one (--run)");
  import->add_option("--format", t->format, "sgai, genie-wish, genie-board, graph, stigmergy, sinfonia")
      ->required();
  import->add_option("file", t->file,
                     "the state file (- for standard input); for sinfonia also a session "
                     "folder: workflow.md and its hand-off envelopes")
      ->required();
  import->add_option("--run", t->run, "update this run instead of creating one");
  import->add_option("--project", t->project, "the new run's project");
  import->callback([&run, &env, t] { run = [&env, t] { return env.Import(*t); }; });

  auto* exp = app.add_subcommand("export", "Write a run as a seed system's state file");
  exp->add_option("--format", t->format, "sgai, genie-wish, genie-board, graph, stigmergy, sinfonia")
      ->required();
  exp->add_option("--run", t->run, "the run")->required();
  exp->add_option("-o,--out", t->file, "write atomically to this file (default: standard output)");
  exp->callback([&run, &env, t] { run = [&env, t] { return env.Export(*t); }; });
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{
      "baton — the durable state engine and coordination hub for a team of AI coding agents\n"
      "and their human partner. Every operation is a verb: baton <group> <verb>.",
      "baton"};
  app.set_help_all_flag("--help-all", "Show every command and verb with its flags");
  app.set_version_flag("--version", "baton " BATON_VERSION " (commit " BATON_COMMIT ")",
                       "Print the version and the commit it was built from");
  app.fallthrough();
  // One command per line: a second command word is refused, not run in the
  // first one's place (each command builds only its own verb).
  app.require_subcommand(0, 1);
  GlobalOptions g;
  app.add_option("--store", g.store,
                 "the store's file (default $BATON_STORE, else the nearest .baton/baton.db in "
                 "this folder or above; baton init makes one)");
  app.add_option("--agent", g.agent, "caller id (default $BATON_AGENT or the login name)");
  app.add_option("--role", g.role, "caller role: coordinator, agent, human, admin (default $BATON_ROLE)");
  app.add_option("--output", g.output,
                 "text, json, id (just the id, for x=$(baton …)) or .FIELD (one field's value)")
      ->check(CLI::Validator(CheckOutputFormat, "FORMAT", "output"));
  app.add_option("--durability", g.durability, "full, normal or off (default $BATON_DURABILITY or full)");
  app.add_option("--root", g.roots,
                 "a folder callers may name paths under (repeatable; default: the project folder "
                 "holding .baton/); the CLI user may name any path but the store's files");

  CommandEnv env(g);
  std::function<int()> run;
  FixedArgs args;
  AddFixedCommands(app, g, run, env, args);
  // Only the verb the command line names is built (all of them for
  // --help-all, completion, or a word to suggest a command for).
  std::vector<std::string> valued;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_min() == 0) continue;  // a flag
    for (const std::string& name : opt->get_lnames()) valued.push_back("--" + name);
    for (const std::string& name : opt->get_snames()) valued.push_back("-" + name);
  }
  std::vector<std::string> fixed;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    fixed.push_back(sub->get_name());
  }
  const VerbChoice choice = ChooseVerbs(std::vector<std::string>(argv + 1, argv + argc), valued,
                                        fixed, CommandEnv::StaticRegistry().Groups());
  Status verbs = AddOperationVerbs(app, env, run, choice);
  if (!verbs.ok()) return ReportError(verbs, "text");
  // Last, so that its script sees every other command.
  auto* completion = app.add_subcommand(
      "completion", "Print a shell completion script: eval \"$(baton completion bash)\" "
                    "(bash, zsh, fish; cmake --install puts them where shells look)");
  std::string shell;
  completion->add_option("shell", shell, "bash, zsh or fish")->required();
  completion->callback([&run, &app, &shell, &g] {
    run = [&app, &shell, &g] {
      Result<std::string> script = CompletionScript(app, shell);
      if (!script.ok()) return ReportError(script.status(), g.output);
      std::cout << *script;
      return 0;
    };
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string hint = Suggestion(app, std::vector<std::string>(argv + 1, argv + argc));
    if (hint.empty()) {
      app.exit(e);
    } else {
      std::cerr << hint << "\n";
    }
    return kUsageExitCode;
  }
  if (!run) {
    std::cout << app.help();
    return kUsageExitCode;
  }
  // One field is one operation's result; these commands print something else.
  if (g.output != "text" && g.output != "json") {
    for (const CLI::App* sub : app.get_subcommands()) {
      static const std::set<std::string> kWhole = {"serve",    "mcp", "url",        "init",
                                                   "log",      "export", "machines", "ops",
                                                   "completion", "flush-mirrors"};
      if (kWhole.contains(sub->get_name())) {
        return ReportError(InvalidArgumentError("--output " + g.output + ": baton " +
                                                sub->get_name() +
                                                " prints no single result; use --output json "
                                                "or text"),
                           "text");
      }
    }
  }
  return run();
}

}  // namespace baton
