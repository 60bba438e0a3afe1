// File: verbs.h
//
// The CLI verbs generated from the operation registry, and the environment
// commands run in: the global options, the Api (opened on first use, so that
// `--help` never creates a store) and the printing of results and errors.

#ifndef BATON_SRC_CLI_VERBS_H_
#define BATON_SRC_CLI_VERBS_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli.h"

namespace baton {

struct LogFilter {
  std::string run;
  std::string kind;
  int64_t since = 0;
  int64_t limit = 1000;
  bool follow = false;
};

// `baton import` / `baton export`.
struct TransferArgs {
  std::string format;
  std::string file;
  std::string run;
  std::string project;
};

// Where one generated verb's flags land.
struct VerbArgs {
  const Operation* op = nullptr;
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> flags;
  std::map<std::string, CLI::Option*> options;
  std::string json;  // --json '{...}' or @file
};

class CommandEnv {
 public:
  explicit CommandEnv(const GlobalOptions& g) : g_(g) {}

  // Calls "op" with "input" as the resolved caller; prints and returns the
  // exit code.
  int CallAndPrint(const std::string& op, const Json& input);
  int ShowMachines(const std::string& name, const std::string& format);
  int ShowOps(const std::string& name);
  int Log(const LogFilter& filter);
  // Reads the file and calls run.import; prints the result.
  int Import(const TransferArgs& args);
  int ImportSinfoniaFolder(const TransferArgs& args);
  // Calls run.export; writes the text to stdout or atomically to the file,
  // and the writer's notes to stderr.
  int Export(const TransferArgs& args);
  // Api::FlushMirrors; prints the paths rewritten.
  int FlushMirrors(bool background);

  const GlobalOptions& globals() const { return g_; }
  // Storage for generated verbs; addresses stay valid.
  VerbArgs& NewVerbArgs() { return verb_args_.emplace_back(); }
  // The operations, for generating verbs (no store is opened); the Api the
  // command opens uses the same ones.
  static const Registry& StaticRegistry();
  static const std::shared_ptr<const Registry>& SharedRegistry();

 private:
  Result<Api*> GetApi(StoreUse use = StoreUse::kExisting);
  Result<Json> Call(const std::string& op, const Json& input);

  const GlobalOptions& g_;
  std::unique_ptr<Api> api_;
  std::deque<VerbArgs> verb_args_;
};

// Which operation verbs a command line needs built: a command builds only
// its own verb (issue 21: a `baton` call builds what it runs).
struct VerbChoice {
  bool all = true;    // every group with all its verbs (help-all, completion,
                      // a word that names nothing: its suggestion)
  std::string group;  // else this group's verbs; "": the groups, no verbs
  std::string verb;   // and of them only this one when it is one ("": all)
};

// Reads "args" (argv without the program) as the parser will: the first
// word that is not a global option or its value is the command. "valued"
// are the global options that take a value ("--store"), "commands" the
// hand-written commands (completion aside), "groups" the operations'.
VerbChoice ChooseVerbs(const std::vector<std::string>& args,
                       const std::vector<std::string>& valued,
                       const std::vector<std::string>& commands,
                       const std::vector<std::string>& groups);

// Adds `baton <group>` for every group and `baton <group> <verb>` for the
// operations "choice" names; the chosen verb sets "run".
Status AddOperationVerbs(CLI::App& app, CommandEnv& env, std::function<int()>& run,
                         const VerbChoice& choice);

}  // namespace baton

#endif  // BATON_SRC_CLI_VERBS_H_
