#include "machine_table.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/embedded.h"

namespace baton::testing {

using nlohmann::json;

namespace {

std::vector<std::string> StringOrList(const json& v) {
  if (v.is_string()) return {v.get<std::string>()};
  std::vector<std::string> out;
  for (const json& s : v) out.push_back(s.get<std::string>());
  return out;
}

}  // namespace

Table ParseTable(const std::string& file, std::string_view text) {
  const json doc = json::parse(text);
  Table t;
  t.file = file;
  t.name = doc.at("name").get<std::string>();
  for (const json& s : doc.at("states")) {
    const std::string name = s.at("name").get<std::string>();
    t.states.push_back(name);
    if (s.value("initial", false)) t.initial = name;
    if (s.value("terminal", false)) t.terminal.insert(name);
  }
  for (const json& tr : doc.at("transitions")) {
    std::vector<std::string> from;
    for (const std::string& f : StringOrList(tr.at("from"))) {
      if (f != "*") {
        from.push_back(f);
        continue;
      }
      for (const std::string& s : t.states) {
        if (!t.terminal.count(s)) from.push_back(s);
      }
    }
    const std::vector<std::string> ops =
        tr.contains("ops") ? StringOrList(tr["ops"]) : std::vector<std::string>{};
    const std::vector<std::string> roles =
        tr.contains("roles") ? StringOrList(tr["roles"]) : std::vector<std::string>{};
    for (const std::string& to : StringOrList(tr.at("to"))) {
      for (const std::string& f : from) t.edges.push_back({f, to, ops, roles});
    }
  }
  return t;
}

const std::vector<Table>& BuiltinTables() {
  static const std::vector<Table>* const kTables = [] {
    auto* out = new std::vector<Table>();
    for (const EmbeddedFile& f : BuiltinMachineFiles()) {
      out->push_back(ParseTable(f.name, f.text));
    }
    return out;
  }();
  return *kTables;
}

const Table& TableFor(const std::string& name) {
  for (const Table& t : BuiltinTables()) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no built-in file for machine " << name;
  static const Table kEmpty;
  return kEmpty;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool Permits(const Edge& e, const std::string& op, const std::string& role) {
  return (e.ops.empty() || Contains(e.ops, op)) &&
         (e.roles.empty() || role == "admin" || Contains(e.roles, role));
}

std::vector<std::string> ExpectedAllowed(const Table& t, const std::string& from,
                                         const std::string& op,
                                         const std::string& role) {
  std::vector<std::string> out;
  for (const Edge& e : t.edges) {
    if (e.from == from && Permits(e, op, role) && !Contains(out, e.to)) {
      out.push_back(e.to);
    }
  }
  return out;
}

}  // namespace baton::testing
