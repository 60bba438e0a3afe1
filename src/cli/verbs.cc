#include "cli/verbs.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/repo_scope.h"
#include "cli/ticker.h"
#include "engine/interchange/imports.h"
#include "util/atomic_file.h"

namespace baton {
namespace {

std::atomic<bool> g_interrupted{false};

std::string FlagName(const std::string& prop) {
  std::string out = prop;
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

// Flags every command takes.
constexpr const char* kGlobalFlags[] = {"store", "agent", "role", "output", "durability", "json"};

// The flag of an input property. A property named like a global flag takes
// the operation's group as a prefix: agent.register's "role" (the agent's
// role in its team) is --agent-role, while --role stays the caller's role.
std::string FlagFor(const Operation& op, const std::string& prop) {
  for (const char* global : kGlobalFlags) {
    if (prop == global) return FlagName(op.name.substr(0, op.name.find('.')) + "-" + prop);
  }
  return FlagName(prop);
}

// ",--x" for a list property named "xs", so a repeated flag reads as one
// value each (`--grant commands --grant paths`); "" when the singular is
// another property's flag or a global one.
std::string SingularAlias(const Operation& op, const std::string& prop) {
  const std::string flag = FlagFor(op, prop);
  if (flag.size() < 2 || flag.back() != 's') return "";
  const std::string singular = flag.substr(0, flag.size() - 1);
  for (const char* global : kGlobalFlags) {
    if (singular == global) return "";
  }
  const Json& props = op.input_schema["properties"];
  for (auto it = props.begin(); it != props.end(); ++it) {
    if (FlagFor(op, it.key()) == singular || it.key() == singular) return "";
  }
  return ",--" + singular;
}

// The first non-null type a property schema names ("" when untyped).
std::string TypeOf(const Json& prop) {
  auto it = prop.find("type");
  if (it == prop.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  for (const Json& t : *it) {
    if (t != "null") return t.get<std::string>();
  }
  return "";
}

// What a flag's value is, for help: INT, NUM, ID, TEXT, JSON, a|b|c.
std::string TypeLabel(const Json& prop) {
  if (prop.contains("enum")) {
    std::string out;
    for (const Json& v : prop["enum"]) out += (out.empty() ? "" : "|") + (v.is_string() ? v.get<std::string>() : v.dump());
    return out;
  }
  const std::string type = TypeOf(prop);
  if (type == "integer") return "INT";
  if (type == "number") return "NUM";
  if (type == "object" || type.empty()) return "JSON";
  if (type == "array") return TypeLabel(prop.value("items", Json::object()));
  return prop.contains("pattern") ? "ID" : "TEXT";
}

// "baton run set-status ID STATUS --reason TEXT": the verb with what it
// needs, for the help's example line.
std::string ExampleOf(const Operation& op, const std::string& group, const std::string& verb) {
  std::string line = "baton " + group + " " + verb;
  const Json& props = op.input_schema["properties"];
  const Json required = op.input_schema.value("required", Json::array());
  for (const std::string& p : op.positional) {
    if (std::find(required.begin(), required.end(), p) == required.end()) continue;
    std::string upper = p;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    line += " " + upper;
  }
  for (const Json& r : required) {
    const std::string p = r.get<std::string>();
    if (std::find(op.positional.begin(), op.positional.end(), p) != op.positional.end()) continue;
    line += " --" + FlagFor(op, p) + " " + TypeLabel(props.value(p, Json::object()));
  }
  return line;
}

Result<std::string> ReadArgText(const std::string& value, const std::string& flag) {
  if (value.empty() || value[0] != '@') return value;
  if (value == "@-") {
    std::string all((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return all;
  }
  Result<std::string> text = ReadFile(value.substr(1));
  if (!text.ok()) return InvalidArgumentError(flag + ": " + text.status().message());
  return text;
}

Result<Json> ConvertScalar(const std::string& type, const std::string& value,
                           const std::string& flag) {
  if (type == "integer") {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0) {
      return InvalidArgumentError(flag + ": must be an integer (got \"" + value + "\")");
    }
    return Json(static_cast<int64_t>(v));
  }
  if (type == "number") {
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') {
      return InvalidArgumentError(flag + ": must be a number (got \"" + value + "\")");
    }
    return Json(v);
  }
  if (type == "string") return Json(value);
  // Objects, arrays and untyped values are JSON text (or @file).
  ASSIGN_OR_RETURN(std::string text, ReadArgText(value, flag));
  return ParseJson(text, flag);
}

Result<Json> BuildInput(const VerbArgs& a) {
  Json input = Json::object();
  if (!a.json.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadArgText(a.json, "--json"));
    ASSIGN_OR_RETURN(input, ParseJson(text, "--json"));
    if (!input.is_object()) return InvalidArgumentError("--json: must be a JSON object");
  }
  const Json& props = a.op->input_schema["properties"];
  for (auto it = props.begin(); it != props.end(); ++it) {
    const std::string& prop = it.key();
    const std::string flag = "--" + FlagFor(*a.op, prop);
    const std::string type = TypeOf(it.value());
    const CLI::Option* opt = a.options.at(prop);
    if (opt->count() == 0) continue;
    if (type == "boolean") {
      input[prop] = a.flags.at(prop);
    } else if (type == "array") {
      const std::vector<std::string>& values = a.lists.at(prop);
      Result<Json> parsed = ParseJson(values.front(), flag);
      if (values.size() == 1 && parsed.ok() && parsed->is_array()) {
        input[prop] = *parsed;
      } else {
        input[prop] = Json(values);
      }
    } else {
      ASSIGN_OR_RETURN(input[prop], ConvertScalar(type, a.scalars.at(prop), flag));
      // A file the store will name from any process: made absolute here.
      if (it.value().value("x-baton-path", false) && input[prop].is_string()) {
        const std::string given = input[prop].get<std::string>();
        std::error_code ec;
        const std::filesystem::path abs = std::filesystem::absolute(given, ec);
        if (given.empty() || ec) {
          return InvalidArgumentError(flag + ": \"" + given + "\" is not a usable path" +
                                      (ec ? ": " + ec.message() : ""));
        }
        input[prop] = abs.lexically_normal().string();
      }
    }
  }
  return input;
}

// An input property whose prefixed flag is still a global flag's name.
Status CheckNoGlobalClash(const Operation& op) {
  for (auto it = op.input_schema["properties"].begin();
       it != op.input_schema["properties"].end(); ++it) {
    const std::string flag = FlagFor(op, it.key());
    for (const char* global : kGlobalFlags) {
      if (flag == global) {
        return InternalError("operation " + op.name + ": input property \"" + it.key() +
                             "\" would shadow the global --" + flag + " flag");
      }
    }
  }
  return Status();
}

void AddVerb(CLI::App& group, CommandEnv& env, const Operation& op, std::function<int()>& run) {
  std::string verb = FlagName(op.name.substr(op.name.find('.') + 1));
  CLI::App* cmd = group.add_subcommand(verb, op.summary);
  VerbArgs& a = env.NewVerbArgs();
  a.op = &op;
  const Json& props = op.input_schema["properties"];
  const Json required = op.input_schema.value("required", Json::array());
  cmd->footer("Example:\n  " + ExampleOf(op, group.get_name(), verb) +
              "\n(--output json for JSON; docs: baton ops " + op.name + ")");
  // Positionals first, in the operation's order: CLI11 assigns positional
  // arguments in the order their options were added.
  std::vector<std::string> names = op.positional;
  for (auto it = props.begin(); it != props.end(); ++it) {
    if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
  }
  for (const std::string& prop : names) {
    const Json& schema = props.at(prop);
    std::string spec = "--" + FlagFor(op, prop);
    if (std::find(op.positional.begin(), op.positional.end(), prop) != op.positional.end()) {
      spec = prop + "," + spec;
    }
    const bool needed = std::find(required.begin(), required.end(), prop) != required.end();
    const std::string desc = (needed ? "REQUIRED: " : "") + schema.value("description", "");
    const std::string type = TypeOf(schema);
    if (type == "boolean") {
      a.options[prop] = cmd->add_flag(spec, a.flags[prop], desc);
    } else if (type == "array") {
      // One value per flag: CLI11 would otherwise split a "[...]" argument at
      // its commas, breaking JSON arrays of objects.
      spec += SingularAlias(op, prop);
      a.options[prop] = cmd->add_option(spec, a.lists[prop], desc + " (repeat, or a JSON array)")
                            ->allow_extra_args(false)
                            ->type_name(TypeLabel(schema) + " ...");
    } else {
      std::string help = desc;
      if (type == "object" || type.empty()) help += " (JSON, or @file)";
      a.options[prop] = cmd->add_option(spec, a.scalars[prop], help)->type_name(TypeLabel(schema));
    }
  }
  cmd->add_option("--json", a.json, "the whole input as a JSON object, or @file (flags override)");
  cmd->callback([&run, &env, &a] {
    run = [&env, &a] {
      Result<Json> input = BuildInput(a);
      if (!input.ok()) return ReportError(input.status(), env.globals().output);
      return env.CallAndPrint(a.op->name, *input);
    };
  });
}

}  // namespace

const std::shared_ptr<const Registry>& CommandEnv::SharedRegistry() {
  static const std::shared_ptr<const Registry>* const kRegistry = [] {
    auto r = std::make_shared<Registry>();
    Status s = RegisterCoreOps(*r);
    // Registration is fixed at build time and covered by tests.
    assert(s.ok());
    (void)s;
    return new std::shared_ptr<const Registry>(std::move(r));
  }();
  return *kRegistry;
}

const Registry& CommandEnv::StaticRegistry() { return *SharedRegistry(); }

VerbChoice ChooseVerbs(const std::vector<std::string>& args,
                       const std::vector<std::string>& valued,
                       const std::vector<std::string>& commands,
                       const std::vector<std::string>& groups) {
  auto names = [](const std::vector<std::string>& list, const std::string& word) {
    return std::find(list.begin(), list.end(), word) != list.end();
  };
  // Skips options from "i" on: the global ones with their values, and
  // ("others") any other; false at one it cannot skip.
  auto skip_options = [&](size_t& i, bool others) {
    while (i < args.size() && args[i].size() > 1 && args[i][0] == '-') {
      const std::string& a = args[i];
      if (a == "--" || a == "--help-all") return false;
      const size_t eq = a.find('=');
      const bool global = names(valued, a.substr(0, eq));
      if (!global && !others) return false;
      i += global && eq == std::string::npos ? 2 : 1;
    }
    return true;
  };
  VerbChoice all;
  size_t i = 0;
  if (!skip_options(i, /*others=*/true)) return all;
  if (i >= args.size() || names(commands, args[i])) return VerbChoice{.all = false};
  if (!names(groups, args[i])) return all;
  VerbChoice choice{.all = false, .group = args[i]};
  ++i;
  if (skip_options(i, /*others=*/false) && i < args.size()) choice.verb = args[i];
  return choice;
}

Status AddOperationVerbs(CLI::App& app, CommandEnv& env, std::function<int()>& run,
                         const VerbChoice& choice) {
  const Registry& registry = CommandEnv::StaticRegistry();
  std::map<std::string, CLI::App*> groups;
  for (const std::string& group : registry.Groups()) {
    CLI::App* g =
        app.add_subcommand(group, "The " + group + " operations (baton " + group + " --help)");
    g->require_subcommand(1);
    g->group("Operation groups");
    groups[group] = g;
  }
  if (!choice.all && choice.group.empty()) return Status();
  std::vector<const Operation*> ops;
  if (!choice.all && !choice.verb.empty()) {
    // The verb's operation alone (its group's other families are not built).
    std::string name = choice.group + "." + choice.verb;
    std::replace(name.begin(), name.end(), '-', '_');
    const Operation* op = registry.Find(name);
    if (op != nullptr && FlagName(op->name.substr(op->name.find('.') + 1)) == choice.verb) {
      ops = {op};
    }
  }
  // A group alone, or a word that is no verb of it: all of them (for the
  // help, or the suggestion).
  if (ops.empty()) ops = choice.all ? registry.All() : registry.InGroup(choice.group);
  for (const Operation* op : ops) {
    RETURN_IF_ERROR(CheckNoGlobalClash(*op));
    AddVerb(*groups.at(op->name.substr(0, op->name.find('.'))), env, *op, run);
  }
  return Status();
}

Result<Api*> CommandEnv::GetApi(StoreUse use) {
  if (!api_) {
    ASSIGN_OR_RETURN(ApiOptions options, ResolveApiOptions(g_, /*group_commit=*/false, use));
    ASSIGN_OR_RETURN(api_, Api::Open(options));
  }
  return api_.get();
}

Result<Json> CommandEnv::Call(const std::string& op, const Json& input) {
  ASSIGN_OR_RETURN(Actor actor, ResolveActor(g_));
  // Long work says how it goes, on stderr, for people (not with --output json).
  Api::ProgressFn progress;
  if (g_.output != "json") {
    progress = [](const std::string& line) { std::cerr << "  " << line << std::endl; };
  }
  // Listing machines or operations needs no store (one found is still used:
  // it may hold the user's machines).
  const Operation* known = StaticRegistry().Find(op);
  ASSIGN_OR_RETURN(Api * api, GetApi(known != nullptr && !known->uses_store ? StoreUse::kOptional
                                                                            : StoreUse::kExisting));
  const Operation* def = api->registry().Find(op);
  if (def != nullptr && def->input_schema["properties"].contains("project") &&
      !input.contains("project")) {
    // Inside a repository that is a project's, the call is about that project.
    const std::string repo = EnclosingRepository(std::filesystem::current_path());
    if (!repo.empty()) {
      ASSIGN_OR_RETURN(Json projects, api->Call("project.list", Json::object(), actor));
      const std::string project = ProjectForRepository(projects, repo);
      if (!project.empty()) {
        Json scoped = input;
        scoped["project"] = project;
        return api->Call(op, scoped, actor, progress);
      }
    }
  }
  return api->Call(op, input, actor, progress);
}

int CommandEnv::CallAndPrint(const std::string& op, const Json& input) {
  Result<Json> result = Call(op, input);
  if (!result.ok()) return ReportError(result.status(), g_.output);
  if (int printed = PrintResult(op, *result, g_.output); printed != 0) return printed;
  const Operation* operation = StaticRegistry().Find(op);
  return operation != nullptr && operation->exit_code ? operation->exit_code(*result) : 0;
}

namespace {

// A file an import reads: refused naming it and its size before a byte is
// read when it is over "limit" ("-": standard input, read up to the limit).
Result<std::string> ReadImportFile(const std::string& file, size_t limit) {
  if (file == "-") {
    std::string text;
    char chunk[1 << 16];
    while (std::cin.read(chunk, sizeof(chunk)) || std::cin.gcount() > 0) {
      text.append(chunk, static_cast<size_t>(std::cin.gcount()));
      if (text.size() > limit) {
        return InvalidArgumentError("<stdin>: more than the " + std::to_string(limit >> 20) +
                                    " MiB an import reads");
      }
    }
    return text;
  }
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec) RETURN_IF_ERROR(CheckImportSize(file, size, limit));
  return ReadFile(file, static_cast<int64_t>(limit));
}

}  // namespace

int CommandEnv::Import(const TransferArgs& t) {
  Result<std::string> text = InternalError("not read");
  std::string source = t.file;
  if (t.file == "-") {
    text = ReadImportFile(t.file, kMaxImportBytes);
    source = "<stdin>";
  } else if (std::error_code ec; std::filesystem::is_directory(t.file, ec)) {
    if (t.format != "sinfonia") {
      return ReportError(InvalidArgumentError(t.file + " is a folder; only --format sinfonia "
                                              "reads a session folder"),
                         g_.output);
    }
    return ImportSinfoniaFolder(t);
  } else {
    text = ReadImportFile(t.file, kMaxImportBytes);
  }
  if (!text.ok()) return ReportError(text.status(), g_.output);
  Json input = {{"format", t.format}, {"content", *text}, {"source", source}};
  if (!t.run.empty()) input["run"] = t.run;
  if (!t.project.empty()) input["project"] = t.project;
  Ticker ticker("importing " + (t.file == "-" ? source : Ticker::Describe(t.file)),
                g_.output != "json");
  return CallAndPrint("run.import", input);
}

// A Sinfonia session folder: its workflow.md, and every other .md file in it
// as a hand-off envelope, in name order.
int CommandEnv::ImportSinfoniaFolder(const TransferArgs& t) {
  namespace fs = std::filesystem;
  const fs::path folder(t.file);
  Result<std::string> index = ReadImportFile((folder / "workflow.md").string(), kMaxImportBytes);
  if (!index.ok()) return ReportError(index.status(), g_.output);
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".md" &&
        it->path().filename() != "workflow.md") {
      files.push_back(it->path());
    }
  }
  if (ec) {
    return ReportError(InternalError("reading the folder " + t.file + ": " + ec.message()),
                       g_.output);
  }
  std::sort(files.begin(), files.end());
  Json envelopes = Json::array();
  for (const fs::path& f : files) {
    // A file too large for an envelope is no envelope (an artefact beside
    // them): skipped and named, as the import skips what it cannot read.
    Result<std::string> text = ReadImportFile(f.string(), kMaxEnvelopeBytes);
    if (!text.ok() && text.status().code() == StatusCode::kInvalidArgument) {
      std::cerr << "baton: note: envelope skipped: " << Printable(text.status().message()) << "\n";
      continue;
    }
    if (!text.ok()) return ReportError(text.status(), g_.output);
    envelopes.push_back({{"name", f.string()}, {"content", *text}});
  }
  Json input = {{"format", "sinfonia"},
                {"content", *index},
                {"source", (folder / "workflow.md").string()},
                {"envelopes", envelopes}};
  if (!t.run.empty()) input["run"] = t.run;
  if (!t.project.empty()) input["project"] = t.project;
  Ticker ticker("importing the session folder " + t.file, g_.output != "json");
  return CallAndPrint("run.import", input);
}

int CommandEnv::Export(const TransferArgs& t) {
  Result<Json> result = InternalError("not run");
  {
    Ticker ticker("exporting " + t.run + " as " + t.format, g_.output != "json");
    result = Call("run.export", Json{{"run", t.run}, {"format", t.format}});
  }
  if (!result.ok()) return ReportError(result.status(), g_.output);
  for (const Json& note : (*result)["notes"]) {
    std::cerr << "baton: note: " << note.get<std::string>() << "\n";
  }
  const std::string& text = (*result)["content"].get_ref<const std::string&>();
  if (t.file.empty() || t.file == "-") {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  // Mirror writers of the same folder take this lock too (and clear stale
  // temporary files under it).
  std::error_code ec;
  const std::filesystem::path out = std::filesystem::absolute(t.file, ec);
  // A user's mistake, said as one: the folder to write into must exist.
  if (!std::filesystem::is_directory(out.parent_path(), ec)) {
    return ReportError(NotFoundError("-o " + t.file + ": no folder " +
                                     out.parent_path().string() +
                                     " to write into (make it first; baton creates no folders)"),
                       g_.output);
  }
  Result<FolderLock> lock = FolderLock::Acquire(out.parent_path().string());
  if (!lock.ok()) return ReportError(lock.status(), g_.output);
  Status written = WriteFileAtomically(out.string(), text);
  if (!written.ok()) return ReportError(written, g_.output);
  if (g_.output == "json") {
    Json out = *result;
    out.erase("content");
    out["path"] = t.file;
    std::cout << out.dump(2) << "\n";
  }
  return 0;
}

int CommandEnv::ShowMachines(const std::string& name, const std::string& format) {
  if (name.empty()) return CallAndPrint("machine.list", Json::object());
  Result<Json> result = Call("machine.show", Json{{"name", name}});
  if (!result.ok()) return ReportError(result.status(), g_.output);
  if (format == "mermaid") {
    std::cout << (*result)["mermaid"].get<std::string>();
  } else if (format == "json" || g_.output == "json") {
    std::cout << (*result)["machine"].dump(2) << "\n";
  } else {
    std::cout << (*result)["text"].get<std::string>();
  }
  return 0;
}

int CommandEnv::ShowOps(const std::string& name) {
  Json input = Json::object();
  if (!name.empty()) input["name"] = name;
  Result<Json> result = Call("op.list", input);
  if (!result.ok()) return ReportError(result.status(), g_.output);
  if (name.empty() || g_.output == "json") {
    return PrintResult("op.list", *result, g_.output);
  } else {
    std::cout << RenderText("op.describe", (*result)["operations"][0]);
  }
  return 0;
}

int CommandEnv::FlushMirrors(bool background) {
  Result<Api*> api = GetApi();
  if (!api.ok()) return ReportError(api.status(), g_.output);
  Result<Json> result = (*api)->FlushMirrors(background);
  if (!result.ok()) return ReportError(result.status(), g_.output);
  const Json& failed = (*result)["failed"];
  if (g_.output == "json") {
    std::cout << result->dump(2) << "\n";
  } else {
    const Json& written = (*result)["written"];
    if (written.empty() && failed.empty()) std::cout << "every mirror is up to date\n";
    for (const Json& path : written) {
      std::cout << Printable("rewrote " + path.get<std::string>()) << "\n";
    }
    for (const Json& f : failed) {
      std::cerr << Printable("baton: mirror " + f["path"].get<std::string>() + " not written: " +
                             f["error"].get<std::string>())
                << "\n";
    }
  }
  // Each failure is in the ledger (mirror.failed) and in `baton status`.
  return failed.empty() ? 0 : 1;
}

int CommandEnv::Log(const LogFilter& f) {
  int64_t since = f.since;
  std::signal(SIGINT, [](int) { g_interrupted = true; });
  std::signal(SIGTERM, [](int) { g_interrupted = true; });
  for (bool first = true; first || (f.follow && !g_interrupted); first = false) {
    Json input = {{"since", since}, {"limit", f.limit}};
    if (!f.run.empty()) input["run"] = f.run;
    if (!f.kind.empty()) input["kind"] = f.kind;
    Result<Json> result = Call("ledger.events", input);
    if (!result.ok()) return ReportError(result.status(), g_.output);
    const Json& events = (*result)["events"];
    if (g_.output == "json") {
      // One event per line, so `--follow --output json` is a JSON Lines stream.
      for (const Json& e : events) std::cout << e.dump() << "\n";
    } else if (first || !events.empty()) {
      std::string table = RenderText("ledger.events", *result);
      // While following, print the header once.
      std::cout << (first ? table : table.substr(table.find('\n') + 1));
      // A full page may not be all: say so, and how to read on (on stderr,
      // so the table stays the output).
      if (!f.follow && static_cast<int64_t>(events.size()) == f.limit && !events.empty()) {
        std::cerr << "baton: showing " << f.limit << " events from seq " << events[0]["seq"]
                  << "; more may follow: baton log --since " << events.back()["seq"]
                  << " (or --limit N)\n";
      }
    }
    std::cout.flush();
    if (!events.empty()) since = events.back()["seq"].get<int64_t>();
    if (f.follow && events.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return 0;
}

}  // namespace baton
