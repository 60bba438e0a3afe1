// File: machine_table.h
//
// The built-in machine files read independently of model/machine.cc (plain
// nlohmann, "from" lists and "*" expanded as docs/machines.md says), so that
// tests compare Machine::Check with what a file says and not with itself.
// machine_test and machine_walk_test share it.

#ifndef BATON_TESTS_MACHINE_TABLE_H_
#define BATON_TESTS_MACHINE_TABLE_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace baton::testing {

struct Edge {
  std::string from;
  std::string to;
  std::vector<std::string> ops;
  std::vector<std::string> roles;
};

struct Table {
  std::string name;
  std::string file;
  std::string initial;
  std::vector<std::string> states;
  std::set<std::string> terminal;
  std::vector<Edge> edges;  // in file order, "from" and "to" lists expanded

  const Edge* Find(const std::string& from, const std::string& to) const {
    for (const Edge& e : edges) {
      if (e.from == from && e.to == to) return &e;
    }
    return nullptr;
  }
};

// A machine file's text as a table.
Table ParseTable(const std::string& file, std::string_view text);
// Every built-in machine file, read once.
const std::vector<Table>& BuiltinTables();
// The built-in table of machine "name" (a test failure when there is none).
const Table& TableFor(const std::string& name);

bool Contains(const std::vector<std::string>& v, std::string_view s);
// Whether edge "e" lets "op" called by "role" take it (admin passes roles).
bool Permits(const Edge& e, const std::string& op, const std::string& role);
// What the file says may follow "from" for this caller, in file order.
std::vector<std::string> ExpectedAllowed(const Table& t, const std::string& from,
                                         const std::string& op, const std::string& role);

}  // namespace baton::testing

#endif  // BATON_TESTS_MACHINE_TABLE_H_
