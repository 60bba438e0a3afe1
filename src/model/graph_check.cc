// The static checks of a graph definition (FindGraphProblems) and the node
// type table they and the reader share.

#include <algorithm>
#include <cctype>
#include <lua.hpp>
#include <map>
#include <memory>
#include <set>

#include "model/graph_def.h"

namespace baton {
namespace {

// How an option's value is checked.
enum class Opt {
  kText,       // a non-empty string
  kTemplate,   // a non-empty string whose {{...}} placeholders name context values
  kLua,        // a non-empty string that compiles as a Lua chunk
  kSlash,      // a string starting with "/"
  kStringMap,  // a mapping of strings (env, headers)
  kArgv,       // a non-empty list of non-empty strings
  kTimeout,    // milliseconds, 1..86400000
  kMethod,     // GET | POST | PUT | PATCH | DELETE
  kUrl,        // http:// or https://
  kChoices,    // a non-empty list of distinct non-empty strings
  kBool,
  kEnvName,  // an environment variable's name
};

struct OptionSpec {
  const char* key;
  Opt kind;
  bool required = false;
};

struct TypeSpec {
  GraphNodeType type;
  std::vector<OptionSpec> options;
};

const std::vector<TypeSpec>& Specs() {
  static const std::vector<TypeSpec> kSpecs = {
      {{"command", "lastCommandResult", R"({"timeoutMs": 300000})"},
       {{"command", Opt::kText, true},
        {"cwd", Opt::kText},
        {"env", Opt::kStringMap},
        {"timeoutMs", Opt::kTimeout}}},
      {{"dynamic-command", "lastDynamicCommandResult", R"({"timeoutMs": 300000})"},
       {{"build", Opt::kLua, true},
        {"cwd", Opt::kText},
        {"env", Opt::kStringMap},
        {"timeoutMs", Opt::kTimeout}}},
      {{"http", "lastHttpResult", R"({"method": "GET", "timeoutMs": 60000})"},
       {{"url", Opt::kUrl, true},
        {"method", Opt::kMethod},
        {"headers", Opt::kStringMap},
        {"body", Opt::kLua},
        {"timeoutMs", Opt::kTimeout}}},
      {{"eval", "lastEvalResult", "{}"}, {{"code", Opt::kLua, true}}},
      {{"agent", "lastDynamicAgentResult",
        R"({"agentCommand": ["claude", "-p"], "timeoutMs": 600000})"},
       {{"prompt", Opt::kTemplate, true},
        {"agentCommand", Opt::kArgv},
        {"cwd", Opt::kText},
        {"timeoutMs", Opt::kTimeout}}},
      {{"dynamic-agent", "lastDynamicAgentResult",
        R"({"agentCommand": ["claude", "-p"], "timeoutMs": 600000})"},
       {{"build", Opt::kLua, true},
        {"agentCommand", Opt::kArgv},
        {"cwd", Opt::kText},
        {"timeoutMs", Opt::kTimeout}}},
      {{"llm", "lastLLMResult",
        R"({"endpoint": "http://127.0.0.1:11434/v1/chat/completions", "timeoutMs": 600000})"},
       {{"prompt", Opt::kTemplate, true},
        {"model", Opt::kText, true},
        {"endpoint", Opt::kUrl},
        {"apiKeyEnv", Opt::kEnvName},
        {"timeoutMs", Opt::kTimeout}}},
      {{"slash-command", "lastSlashCommandResult",
        R"({"agentCommand": ["claude", "-p"], "timeoutMs": 600000})"},
       {{"command", Opt::kSlash, true},
        {"agentCommand", Opt::kArgv},
        {"cwd", Opt::kText},
        {"timeoutMs", Opt::kTimeout}}},
      {{"human", "lastHumanAnswer", "{}"},
       // A question is answered by choosing (baton's questions always offer
       // choices; the human may add free text).
       {{"question", Opt::kText, true}, {"choices", Opt::kChoices, true}, {"multiSelect", Opt::kBool}}},
  };
  return kSpecs;
}

const TypeSpec* FindSpec(std::string_view type) {
  for (const TypeSpec& s : Specs()) {
    if (s.type.name == type) return &s;
  }
  return nullptr;
}

bool IsIdent(std::string_view s, bool allow_dash) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [allow_dash](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (allow_dash && c == '-');
  });
}

// "context.a.b": the path a placeholder may name.
bool IsContextPath(std::string_view s) {
  constexpr std::string_view kPrefix = "context.";
  if (s.substr(0, kPrefix.size()) != kPrefix) return false;
  s.remove_prefix(kPrefix.size());
  for (size_t dot; (dot = s.find('.')) != std::string_view::npos; s.remove_prefix(dot + 1)) {
    if (!IsIdent(s.substr(0, dot), false)) return false;
  }
  return IsIdent(s, false);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Lua's own message when "code" does not compile as a text chunk; "" when it
// does. Nothing runs: loading only compiles.
std::string LuaCompileError(const std::string& code, const std::string& chunk) {
  std::unique_ptr<lua_State, decltype(&lua_close)> lua(luaL_newstate(), &lua_close);
  if (lua == nullptr) return "Lua could not start (out of memory)";
  const std::string name = "=" + chunk;
  if (luaL_loadbufferx(lua.get(), code.data(), code.size(), name.c_str(), "t") == LUA_OK) {
    return "";
  }
  const char* message = lua_tostring(lua.get(), -1);
  return message != nullptr ? message : "unknown Lua error";
}

// At most 20 names: a message stays readable however large the graph.
std::string JoinNames(const std::vector<std::string>& names) {
  constexpr size_t kMaxNames = 20;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxNames; ++i) {
    out += (out.empty() ? "" : ", ") + names[i];
  }
  if (names.size() > kMaxNames) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

class Checker {
 public:
  explicit Checker(const GraphDef& def) : def_(def) {
    for (size_t i = 0; i < def.nodes.size(); ++i) {
      const std::string& name = def.nodes[i].name;
      if (name.empty()) continue;
      if (!first_.emplace(name, i).second) {
        duplicates_ = true;
        continue;
      }
      if (name != kGraphEnd && name != kGraphError) names_.push_back(name);
    }
  }

  std::vector<GraphProblem> Run() {
    CheckDocument();
    CheckNames();
    for (size_t i = 0; i < def_.nodes.size(); ++i) CheckNode(def_.nodes[i], Label(i));
    CheckReachability();
    return std::move(problems_);
  }

 private:
  void Add(const std::string& node, const std::string& field, std::string message) {
    problems_.push_back({node, field, std::move(message)});
  }

  // A repeated name also gives the position, so its problems say which node.
  std::string Label(size_t i) const {
    const std::string& name = def_.nodes[i].name;
    std::string at = "nodes[" + std::to_string(i) + "]";
    if (name.empty()) return at;
    return first_.at(name) == i ? name : name + " (" + at + ")";
  }

  bool Known(std::string_view name) const {
    return name != kGraphEnd && name != kGraphError && first_.find(name) != first_.end();
  }

  void CheckDocument() {
    if (def_.id.empty()) {
      Add("", "id", "is required");
    } else if (def_.id.size() > 128 || !std::isalnum(static_cast<unsigned char>(def_.id[0])) ||
               !std::all_of(def_.id.begin(), def_.id.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                        c == '.';
               })) {
      Add("", "id",
          "\"" + def_.id +
              "\" must be letters, digits, _ - . (a letter or digit "
              "first, at most 128)");
    }
    if (def_.nodes.empty()) Add("", "nodes", "at least one node is required");
  }

  void CheckNames() {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < def_.nodes.size(); ++i) {
      const std::string& name = def_.nodes[i].name;
      if (name.empty()) {
        Add(Label(i), "name", "is required");
      } else if (name == kGraphEnd || name == kGraphError) {
        Add(name, "name", "END and ERROR are the terminal targets and cannot name a node");
      } else if (name.size() > 64 || !std::isalpha(static_cast<unsigned char>(name[0])) ||
                 !IsIdent(name, true)) {
        Add(name, "name", "must be a letter, then letters, digits, _ or - (at most 64)");
      } else if (auto [it, fresh] = first.emplace(name, i); !fresh) {
        Add(name, "name",
            "is defined twice (nodes[" + std::to_string(it->second) + "] and nodes[" +
                std::to_string(i) + "])");
      }
    }
  }

  void CheckNode(const GraphNode& node, const std::string& label) {
    const TypeSpec* spec = FindSpec(node.type);
    if (node.type.empty()) {
      Add(label, "type", "is required");
    } else if (spec == nullptr) {
      std::vector<std::string> known;
      for (const TypeSpec& s : Specs()) known.emplace_back(s.type.name);
      Add(label, "type",
          "unknown node type \"" + node.type + "\" (known: " + JoinNames(known) + ")");
    } else {
      CheckOptions(node, label, *spec);
    }
    if (!node.result_key.empty() &&
        (!IsIdent(node.result_key, false) || node.result_key.rfind("__", 0) == 0 ||
         node.result_key.size() > 128)) {
      Add(label, "resultKey",
          "must be a context key: letters, digits and _, not starting with "
          "a digit or \"__\"");
    }
    if (node.retry.max < 0 || node.retry.max > 100) {
      Add(label, "retry.max", "must be an integer from 0 to 100");
    }
    if (node.retry.backoff_ms < 0 || node.retry.backoff_ms > 3'600'000) {
      Add(label, "retry.backoffMs", "must be an integer from 0 to 3600000");
    }
    CheckRouting(node.then, label);
  }

  void CheckOptions(const GraphNode& node, const std::string& label, const TypeSpec& spec) {
    const std::string type(spec.type.name);
    std::vector<std::string> allowed;
    for (const OptionSpec& o : spec.options) allowed.emplace_back(o.key);
    for (auto it = node.options.begin(); it != node.options.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        Add(label, it.key(),
            "unknown option for type " + type + " (options: " + JoinNames(allowed) +
                "; and name, type, resultKey, retry, then)");
      }
    }
    for (const OptionSpec& o : spec.options) {
      auto it = node.options.find(o.key);
      if (it == node.options.end() || it->is_null()) {
        if (o.required) Add(label, o.key, "is required by type " + type);
        continue;
      }
      CheckValue(label, o.key, o.kind, *it);
    }
    const auto multi = node.options.find("multiSelect");
    if (multi != node.options.end() && *multi == true && !node.options.contains("choices")) {
      Add(label, "multiSelect", "needs choices to select from");
    }
  }

  void CheckValue(const std::string& label, const std::string& field, Opt kind, const Json& v) {
    switch (kind) {
      case Opt::kText:
      case Opt::kTemplate:
      case Opt::kLua:
        if (!v.is_string() || v.get<std::string>().empty()) {
          return Add(label, field, "must be a non-empty string");
        }
        if (kind == Opt::kTemplate) return CheckTemplate(label, field, v.get<std::string>());
        if (kind == Opt::kLua) return CheckLua(label, field, v.get<std::string>(), false);
        return;
      case Opt::kSlash:
        if (!v.is_string() || v.get<std::string>().size() < 2 || v.get<std::string>()[0] != '/') {
          Add(label, field, "must be a slash command, like \"/review\"");
        }
        return;
      case Opt::kStringMap:
        return CheckStringMap(label, field, v);
      case Opt::kArgv:
      case Opt::kChoices:
        return CheckStringList(label, field, v, kind == Opt::kChoices);
      case Opt::kTimeout:
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 86'400'000 ||
            (v.is_number_unsigned() && v.get<uint64_t>() > 86'400'000)) {
          Add(label, field, "must be an integer number of milliseconds from 1 to 86400000");
        }
        return;
      case Opt::kMethod:
        if (!v.is_string() || std::set<std::string>{"GET", "POST", "PUT", "PATCH", "DELETE"}.count(
                                  v.get<std::string>()) == 0) {
          Add(label, field, "must be one of GET, POST, PUT, PATCH, DELETE");
        }
        return;
      case Opt::kUrl:
        if (!v.is_string() || (v.get<std::string>().rfind("http://", 0) != 0 &&
                               v.get<std::string>().rfind("https://", 0) != 0)) {
          Add(label, field, "must be an http:// or https:// URL");
        }
        return;
      case Opt::kBool:
        if (!v.is_boolean()) Add(label, field, "must be true or false");
        return;
      case Opt::kEnvName:
        if (!v.is_string() || !IsIdent(v.get<std::string>(), false)) {
          Add(label, field, "must be an environment variable's name");
        }
        return;
    }
  }

  void CheckStringMap(const std::string& label, const std::string& field, const Json& v) {
    if (!v.is_object()) return Add(label, field, "must be a mapping of names to strings");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key().empty() || it.key().find('=') != std::string::npos) {
        Add(label, field, "\"" + it.key() + "\" is not a usable name");
      } else if (!it.value().is_string()) {
        Add(label, field + "." + it.key(),
            "must be a string (quote it: \"" + it.value().dump() + "\")");
      }
    }
  }

  void CheckStringList(const std::string& label, const std::string& field, const Json& v,
                       bool distinct) {
    if (!v.is_array() || v.empty()) return Add(label, field, "must be a non-empty list of strings");
    std::set<std::string> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = field + "[" + std::to_string(i) + "]";
      if (!v[i].is_string() || v[i].get<std::string>().empty()) {
        Add(label, at, "must be a non-empty string");
      } else if (distinct && !seen.insert(v[i].get<std::string>()).second) {
        Add(label, at, "\"" + v[i].get<std::string>() + "\" is listed twice");
      }
    }
  }

  void CheckTemplate(const std::string& label, const std::string& field, const std::string& text) {
    for (size_t pos = text.find("{{"); pos != std::string::npos; pos = text.find("{{", pos)) {
      const size_t close = text.find("}}", pos + 2);
      if (close == std::string::npos) {
        return Add(
            label, field,
            "the \"{{\" at character " + std::to_string(pos + 1) + " is never closed with \"}}\"");
      }
      const std::string_view inner = Trim(std::string_view(text).substr(pos + 2, close - pos - 2));
      if (!IsContextPath(inner)) {
        Add(label, field,
            "placeholder {{" + std::string(inner) +
                "}} must name a context value, like {{context.plan}}");
      }
      pos = close + 2;
    }
  }

  void CheckLua(const std::string& label, const std::string& field, const std::string& code,
                bool expression) {
    // "return " + a condition compiles only for expressions (a statement after
    // a return is a syntax error), with Lua's line numbers as written. The
    // parenthesised form then refuses a list of them; its ")" is on a line
    // of its own so a trailing "--" comment cannot swallow it.
    const std::string error = LuaCompileError(expression ? "return " + code : code, field);
    if (!error.empty()) {
      Add(label, field,
          std::string(expression ? "is not a Lua expression" : "Lua does not compile") + ": " +
              error);
    } else if (expression && !LuaCompileError("return (" + code + "\n)", field).empty()) {
      Add(label, field, "must be one Lua expression, not a list");
    }
  }

  void CheckRouting(const GraphRouting& r, const std::string& label) {
    using Kind = GraphRouting::Kind;
    if (r.kind == Kind::kNone) return Add(label, "then", "is required");
    if (r.kind == Kind::kStatic) return CheckTarget(label, "then", r.target);
    if (r.kind == Kind::kLua) {
      if (r.lua.empty()) return Add(label, "then.lua", "must be non-empty Lua code");
      return CheckLua(label, "then.lua", r.lua, false);
    }
    if (r.cases.empty()) return Add(label, "then", "has no cases");
    for (size_t i = 0; i < r.cases.size(); ++i) {
      const std::string field = "then[" + std::to_string(i) + "]";
      const GraphCase& c = r.cases[i];
      if (!c.when.has_value() && i + 1 < r.cases.size()) {
        Add(label, field,
            "a case without \"when\" is the default and must come last (" +
                std::to_string(r.cases.size() - i - 1) + " case(s) follow it)");
      } else if (c.when.has_value() && Trim(*c.when).empty()) {
        Add(label, field + ".when", "is empty (leave it out for the default case)");
      } else if (c.when.has_value()) {
        CheckLua(label, field + ".when", *c.when, true);
      }
      CheckTarget(label, field + ".goto", c.target);
    }
  }

  void CheckTarget(const std::string& label, const std::string& field, const std::string& target) {
    if (target.empty()) return Add(label, field, "is required (a node, END or ERROR)");
    if (target == kGraphEnd || target == kGraphError || Known(target)) return;
    Add(label, field,
        "no node \"" + target + "\" (nodes: " + JoinNames(names_) + "; or END, ERROR)");
  }

  // Only static routing can be followed; a Lua router may go anywhere. With a
  // name defined twice the graph is ambiguous, and that is reported already.
  void CheckReachability() {
    if (def_.nodes.empty() || duplicates_) return;
    for (const GraphNode& n : def_.nodes) {
      if (n.then.kind == GraphRouting::Kind::kLua || n.then.kind == GraphRouting::Kind::kNone) {
        return;
      }
    }
    // A target names the first node of that name (END and ERROR too, when a
    // node is wrongly so named: that is reported once, as a name problem).
    std::vector<bool> reached(def_.nodes.size(), false);
    std::vector<size_t> todo = {0};
    reached[0] = true;
    while (!todo.empty()) {
      const GraphRouting& r = def_.nodes[todo.back()].then;
      todo.pop_back();
      std::vector<const std::string*> targets = {&r.target};
      for (const GraphCase& c : r.cases) targets.push_back(&c.target);
      for (const std::string* t : targets) {
        auto it = first_.find(*t);
        if (it != first_.end() && !reached[it->second]) {
          reached[it->second] = true;
          todo.push_back(it->second);
        }
      }
    }
    for (size_t i = 0; i < def_.nodes.size(); ++i) {
      const std::string& name = def_.nodes[i].name;
      if (name.empty() || reached[i] || first_.at(name) != i) continue;
      Add(name, "", "unreachable: no route from the entry node " + def_.entry() + " leads here");
    }
  }

  const GraphDef& def_;
  std::map<std::string, size_t, std::less<>> first_;  // each name's first node
  std::vector<std::string> names_;  // distinct names of nodes, in file order (not END, ERROR)
  bool duplicates_ = false;
  std::vector<GraphProblem> problems_;
};

}  // namespace

const std::vector<GraphNodeType>& GraphNodeTypes() {
  static const std::vector<GraphNodeType> kTypes = [] {
    std::vector<GraphNodeType> out;
    for (const TypeSpec& s : Specs()) out.push_back(s.type);
    return out;
  }();
  return kTypes;
}

const GraphNodeType* FindGraphNodeType(std::string_view type) {
  for (const GraphNodeType& t : GraphNodeTypes()) {
    if (t.name == type) return &t;
  }
  return nullptr;
}

std::vector<GraphProblem> FindGraphProblems(const GraphDef& def) { return Checker(def).Run(); }

}  // namespace baton
