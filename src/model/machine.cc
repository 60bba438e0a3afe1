#include "model/machine.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "model/embedded.h"
#include "util/json_util.h"

namespace baton {
namespace {

using nlohmann::json;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Join(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Status FieldError(std::string_view source, std::string_view field,
                  std::string_view why) {
  return InvalidArgumentError(std::string(source) + ": " + std::string(field) +
                              ": " + std::string(why));
}

// Reads an optional string member; a present non-string is an error.
Status ReadString(const json& obj, const char* key, std::string_view source,
                  std::string_view where, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status();
  if (!it->is_string()) {
    return FieldError(source, std::string(where) + key, "must be a string");
  }
  *out = it->get<std::string>();
  return Status();
}

Status ReadBool(const json& obj, const char* key, std::string_view source,
                std::string_view where, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status();
  if (!it->is_boolean()) {
    return FieldError(source, std::string(where) + key, "must be true or false");
  }
  *out = it->get<bool>();
  return Status();
}

// A string or an array of strings.
Status ReadStringList(const json& obj, const char* key, std::string_view source,
                      std::string_view where, std::vector<std::string>* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status();
  const std::string field = std::string(where) + key;
  if (it->is_string()) {
    out->push_back(it->get<std::string>());
    return Status();
  }
  if (!it->is_array()) {
    return FieldError(source, field, "must be a string or a list of strings");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return FieldError(source, field + "[" + std::to_string(i) + "]",
                        "must be a string");
    }
    out->push_back((*it)[i].get<std::string>());
  }
  return Status();
}

Status CheckKeys(const json& obj, std::initializer_list<const char*> allowed,
                 std::string_view source, std::string_view where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : allowed) known = known || it.key() == k;
    if (!known) {
      std::string list;
      for (const char* k : allowed) list += std::string(list.empty() ? "" : ", ") + k;
      return FieldError(source, std::string(where) + it.key(),
                        "unknown field (allowed: " + list + ")");
    }
  }
  return Status();
}

const char* const kKnownRoles[] = {"coordinator", "agent", "human", "admin"};

}  // namespace

Result<Machine> Machine::FromJson(const json& doc, std::string_view source) {
  if (!doc.is_object()) return FieldError(source, "(document)", "must be a JSON object");
  RETURN_IF_ERROR(CheckKeys(doc, {"name", "system", "description", "states", "transitions", "$schema"},
                            source, ""));
  Machine m;
  m.source_ = source;
  RETURN_IF_ERROR(ReadString(doc, "name", source, "", &m.name_));
  if (m.name_.empty()) return FieldError(source, "name", "is required");
  RETURN_IF_ERROR(ReadString(doc, "system", source, "", &m.system_));
  RETURN_IF_ERROR(ReadString(doc, "description", source, "", &m.description_));

  auto states = doc.find("states");
  if (states == doc.end() || !states->is_array() || states->empty()) {
    return FieldError(source, "states", "must be a non-empty list");
  }
  for (size_t i = 0; i < states->size(); ++i) {
    const json& s = (*states)[i];
    const std::string where = "states[" + std::to_string(i) + "].";
    if (!s.is_object()) return FieldError(source, where.substr(0, where.size() - 1), "must be an object");
    RETURN_IF_ERROR(CheckKeys(s, {"name", "description", "initial", "terminal"}, source, where));
    MachineState st;
    RETURN_IF_ERROR(ReadString(s, "name", source, where, &st.name));
    if (st.name.empty()) return FieldError(source, where + "name", "is required");
    if (m.HasState(st.name)) return FieldError(source, where + "name", "duplicate state " + Quote(st.name));
    RETURN_IF_ERROR(ReadString(s, "description", source, where, &st.description));
    RETURN_IF_ERROR(ReadBool(s, "initial", source, where, &st.initial));
    RETURN_IF_ERROR(ReadBool(s, "terminal", source, where, &st.terminal));
    if (st.initial) {
      if (!m.initial_.empty()) return FieldError(source, where + "initial", "a second initial state (first: " + Quote(m.initial_) + ")");
      m.initial_ = st.name;
    }
    m.states_.push_back(std::move(st));
  }
  if (m.initial_.empty()) return FieldError(source, "states", "no state is marked \"initial\": true");

  auto transitions = doc.find("transitions");
  if (transitions == doc.end() || !transitions->is_array()) {
    return FieldError(source, "transitions", "must be a list");
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < transitions->size(); ++i) {
    const json& t = (*transitions)[i];
    const std::string where = "transitions[" + std::to_string(i) + "].";
    if (!t.is_object()) return FieldError(source, where.substr(0, where.size() - 1), "must be an object");
    RETURN_IF_ERROR(CheckKeys(t, {"from", "to", "ops", "roles", "note"}, source, where));
    std::vector<std::string> from;
    std::vector<std::string> to;
    MachineTransition proto;
    RETURN_IF_ERROR(ReadStringList(t, "from", source, where, &from));
    RETURN_IF_ERROR(ReadStringList(t, "to", source, where, &to));
    RETURN_IF_ERROR(ReadStringList(t, "ops", source, where, &proto.ops));
    RETURN_IF_ERROR(ReadStringList(t, "roles", source, where, &proto.roles));
    RETURN_IF_ERROR(ReadString(t, "note", source, where, &proto.note));
    if (from.empty()) return FieldError(source, where + "from", "is required");
    if (to.empty()) return FieldError(source, where + "to", "is required");
    for (const std::string& role : proto.roles) {
      if (std::find(std::begin(kKnownRoles), std::end(kKnownRoles), role) == std::end(kKnownRoles)) {
        return FieldError(source, where + "roles", "unknown role " + Quote(role) + " (roles: coordinator, agent, human, admin)");
      }
    }
    // "*" stands for every state that is not terminal.
    std::vector<std::string> expanded;
    for (const std::string& f : from) {
      if (f == "*") {
        for (const MachineState& s : m.states_) {
          if (!s.terminal) expanded.push_back(s.name);
        }
      } else if (!m.HasState(f)) {
        return FieldError(source, where + "from", "unknown state " + Quote(f));
      } else {
        expanded.push_back(f);
      }
    }
    for (const std::string& dst : to) {
      if (!m.HasState(dst)) return FieldError(source, where + "to", "unknown state " + Quote(dst));
      for (const std::string& src : expanded) {
        if (!seen.insert({src, dst}).second) {
          return FieldError(source, where.substr(0, where.size() - 1),
                            "transition " + src + " -> " + dst + " is listed twice");
        }
        MachineTransition tr = proto;
        tr.from = src;
        tr.to = dst;
        m.transitions_.push_back(std::move(tr));
      }
    }
  }
  return m;
}

bool Machine::HasState(std::string_view state) const {
  return std::any_of(states_.begin(), states_.end(),
                     [&](const MachineState& s) { return s.name == state; });
}

bool Machine::IsTerminal(std::string_view state) const {
  for (const MachineState& s : states_) {
    if (s.name == state) return s.terminal;
  }
  return false;
}

namespace {

bool Permits(const MachineTransition& t, const TransitionContext& ctx) {
  const bool op_ok = t.ops.empty() || Contains(t.ops, ctx.op);
  const bool role_ok =
      t.roles.empty() || ctx.role == "admin" || Contains(t.roles, ctx.role);
  return op_ok && role_ok;
}

}  // namespace

std::vector<std::string> Machine::AllowedNext(
    std::string_view from, const TransitionContext& ctx) const {
  std::vector<std::string> out;
  for (const MachineTransition& t : transitions_) {
    if (t.from == from && Permits(t, ctx) && !Contains(out, t.to)) {
      out.push_back(t.to);
    }
  }
  return out;
}

Status Machine::Refuse(StatusCode code, std::string_view from,
                       std::string_view to, std::string_view why,
                       const TransitionContext& ctx) const {
  std::vector<std::string> allowed = AllowedNext(from, ctx);
  std::string msg = "machine " + name_ + ": cannot change status from " +
                    Quote(from) + " to " + Quote(to) + ": " + std::string(why) +
                    "; allowed next states from " + Quote(from) + ": " +
                    Join(allowed);
  if (allowed.empty() && IsTerminal(from)) msg += " (terminal state)";
  json details = {{"machine", name_},
                  {"current", std::string(from)},
                  {"requested", std::string(to)},
                  {"allowed", allowed}};
  return Status(code, std::move(msg), std::move(details));
}

Status Machine::Check(std::string_view from, std::string_view to,
                      const TransitionContext& ctx) const {
  if (!HasState(from)) {
    return Refuse(StatusCode::kInvalidArgument, from, to,
                  "current state is not a state of this machine", ctx);
  }
  if (!HasState(to)) {
    std::vector<std::string> names;
    for (const MachineState& s : states_) names.push_back(s.name);
    return Refuse(StatusCode::kInvalidArgument, from, to,
                  Quote(to) + " is not a state (states: " + Join(names) + ")",
                  ctx);
  }
  const MachineTransition* match = nullptr;
  for (const MachineTransition& t : transitions_) {
    if (t.from == from && t.to == to) match = &t;
  }
  if (match == nullptr) {
    return Refuse(StatusCode::kFailedPrecondition, from, to,
                  "no such transition", ctx);
  }
  if (!match->ops.empty() && !Contains(match->ops, ctx.op)) {
    return Refuse(StatusCode::kFailedPrecondition, from, to,
                  "only " + Join(match->ops) + " may take this transition",
                  ctx);
  }
  if (!Permits(*match, ctx)) {
    return Refuse(StatusCode::kPermissionDenied, from, to,
                  "only role " + Join(match->roles) +
                      " may take this transition (caller's role: " +
                      std::string(ctx.role) + ")",
                  ctx);
  }
  return Status();
}

json Machine::ToJson() const {
  json states = json::array();
  for (const MachineState& s : states_) {
    json j = {{"name", s.name}};
    if (!s.description.empty()) j["description"] = s.description;
    if (s.initial) j["initial"] = true;
    if (s.terminal) j["terminal"] = true;
    states.push_back(std::move(j));
  }
  json transitions = json::array();
  for (const MachineTransition& t : transitions_) {
    json j = {{"from", t.from}, {"to", t.to}};
    if (!t.ops.empty()) j["ops"] = t.ops;
    if (!t.roles.empty()) j["roles"] = t.roles;
    if (!t.note.empty()) j["note"] = t.note;
    transitions.push_back(std::move(j));
  }
  json doc = {{"name", name_}, {"states", states}, {"transitions", transitions}};
  if (!system_.empty()) doc["system"] = system_;
  if (!description_.empty()) doc["description"] = description_;
  return doc;
}

namespace {

}  // namespace

std::string Machine::ToMermaid() const {
  // Mermaid ids cannot hold '-' or spaces, and mangling names could merge two
  // states ("in-progress", "in_progress"): ids are the states' positions and
  // labels keep the real names.
  auto MermaidId = [this](const std::string& state) {
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].name == state) return "s" + std::to_string(i);
    }
    return std::string("s_unknown");
  };
  std::ostringstream out;
  out << "---\ntitle: " << name_ << "\n---\nstateDiagram-v2\n";
  for (const MachineState& s : states_) {
    out << "    state \"" << s.name << "\" as " << MermaidId(s.name) << "\n";
  }
  out << "    [*] --> " << MermaidId(initial_) << "\n";
  for (const MachineTransition& t : transitions_) {
    out << "    " << MermaidId(t.from) << " --> " << MermaidId(t.to);
    std::string label;
    if (!t.ops.empty()) label += Join(t.ops);
    if (!t.roles.empty()) label += (label.empty() ? "" : " ") + std::string("[") + Join(t.roles) + "]";
    if (!label.empty()) out << " : " << label;
    out << "\n";
  }
  for (const MachineState& s : states_) {
    if (s.terminal) out << "    " << MermaidId(s.name) << " --> [*]\n";
  }
  return out.str();
}

std::string Machine::ToText() const {
  std::ostringstream out;
  out << name_;
  if (!description_.empty()) out << " — " << description_;
  out << "\n  states:\n";
  for (const MachineState& s : states_) {
    out << "    " << s.name;
    if (s.initial) out << " (initial)";
    if (s.terminal) out << " (terminal)";
    if (!s.description.empty()) out << " — " << s.description;
    out << "\n";
  }
  out << "  transitions:\n";
  for (const MachineTransition& t : transitions_) {
    out << "    " << t.from << " -> " << t.to;
    if (!t.ops.empty()) out << "  ops: " << Join(t.ops);
    if (!t.roles.empty()) out << "  roles: " << Join(t.roles);
    if (!t.note.empty()) out << "  (" << t.note << ")";
    out << "\n";
  }
  return out.str();
}

namespace {

// One built-in machine (src/model/machines/NAME.json), parsed the first time
// it is asked for: a command that moves one run parses that run's machine,
// not all sixteen (issue 21 item 4).
struct LazyBuiltin {
  std::once_flag once;
  std::optional<Machine> machine;
};

// The index of the built-in file of machine "name", or -1.
int BuiltinIndex(std::string_view name) {
  const std::span<const EmbeddedFile> files = BuiltinMachineFiles();
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string_view file = files[i].name;
    if (file.size() == name.size() + 5 && file.starts_with(name) && file.ends_with(".json")) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

const Machine* BuiltinMachine(std::string_view name) {
  static LazyBuiltin* const kLazy = new LazyBuiltin[BuiltinMachineFiles().size()];
  const int i = BuiltinIndex(name);
  if (i < 0) return nullptr;
  LazyBuiltin& lazy = kLazy[i];
  std::call_once(lazy.once, [&lazy, i] {
    const EmbeddedFile& f = BuiltinMachineFiles()[i];
    const std::string source = "built-in " + std::string(f.name);
    json doc = json::parse(f.text, nullptr, /*allow_exceptions=*/false);
    Result<Machine> m = Machine::FromJson(doc, source);
    if (!m.ok() || m->name() + ".json" != f.name) {
      // The built-in files are part of the build and tested; a failure
      // here is a defect in src/model/machines/, never a user error.
      std::fprintf(stderr, "baton: broken built-in machine %s: %s\n", f.name,
                   m.ok() ? "its name is not its file's" : m.status().ToString().c_str());
      std::abort();
    }
    lazy.machine = std::move(m).value();
  });
  return &*lazy.machine;
}

// The built-in machines' names, from their files' (none is parsed).
std::vector<std::string> BuiltinNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile& f : BuiltinMachineFiles()) {
    const std::string_view file = f.name;
    names.emplace_back(file.substr(0, file.size() - 5));
  }
  return names;
}

}  // namespace

const MachineSet& MachineSet::Builtin() {
  static const MachineSet* const kBuiltin = new MachineSet();
  return *kBuiltin;
}

Status MachineSet::Add(Machine machine) {
  std::string name = machine.name();
  auto [it, inserted] = machines_.emplace(name, std::move(machine));
  if (!inserted) {
    return AlreadyExistsError("machine " + Quote(name) + " is already defined");
  }
  return Status();
}

Result<std::shared_ptr<const MachineSet>> MachineSet::Load(
    const std::string& dir) {
  auto set = std::make_shared<MachineSet>();
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return std::shared_ptr<const MachineSet>(set);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) {
    return FailedPreconditionError("cannot read machine folder " + dir + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    ASSIGN_OR_RETURN(std::string text, ReadFile(path.string()));
    ASSIGN_OR_RETURN(json doc, ParseJson(text, path.string()));
    ASSIGN_OR_RETURN(Machine m, Machine::FromJson(doc, path.string()));
    if (BuiltinIndex(m.name()) >= 0 || set->machines_.contains(m.name())) {
      return FieldError(path.string(), "name",
                        "machine " + Quote(m.name()) + " is already defined (built-in or another file)");
    }
    RETURN_IF_ERROR(set->Add(std::move(m)));
  }
  return std::shared_ptr<const MachineSet>(set);
}

const Machine* MachineSet::Find(std::string_view name) const {
  auto it = machines_.find(name);
  return it == machines_.end() ? BuiltinMachine(name) : &it->second;
}

Result<const Machine*> MachineSet::Get(std::string_view name) const {
  const Machine* m = Find(name);
  if (m != nullptr) return m;
  std::vector<std::string> names = BuiltinNames();
  for (const auto& [n, unused] : machines_) names.push_back(n);
  std::sort(names.begin(), names.end());
  return NotFoundError("no machine named " + Quote(name) +
                       "; machines: " + Join(names));
}

std::vector<const Machine*> MachineSet::All() const {
  std::vector<const Machine*> out;
  for (const std::string& name : BuiltinNames()) out.push_back(BuiltinMachine(name));
  for (const auto& [unused, m] : machines_) out.push_back(&m);
  std::sort(out.begin(), out.end(),
            [](const Machine* a, const Machine* b) { return a->name() < b->name(); });
  return out;
}

}  // namespace baton
