#include "engine/coord/board_columns.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "engine/core/core_services.h"
#include "model/embedded.h"
#include "store/tables/board_template_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton::boards_internal {

constexpr const char* kGates[] = {"human", "agent", "human+agent"};
constexpr const char* kColumnKeys[] = {"id",     "name",         "label",       "gate",
                                       "action", "auto_advance", "transitions", "roles",
                                       "color",  "parallel",     "on_fail",     "position"};
constexpr size_t kMaxColumns = 64;
constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxTextLength = 2000;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }


// "string \"robot\"", "number 3": what a caller sent, for error messages.
std::string Got(const Json& v) {
  std::string text = DumpJson(v);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(v.type_name()) + " " + text;
}

std::string Join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string ColumnNames(const Json& columns) {
  std::vector<std::string> names;
  for (const Json& c : columns) names.push_back(JsonText(c, "name"));
  return JoinNames(names);
}

// Board and column names: letters, digits and . _ - (Genie's "closed-won").
bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength || !std::isalnum(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

Status Invalid(const std::string& field, const std::string& rule, const Json& got) {
  return InvalidArgumentError(field + ": must be " + rule + " (got " + Got(got) + ")");
}

// ---- Column validation ----------------------------------------------------


Status CheckOptionalText(const Json& col, const char* key, const std::string& where,
                         bool nullable) {
  auto it = col.find(key);
  if (it == col.end() || (nullable && it->is_null())) return Status();
  if (!it->is_string() || it->get<std::string>().size() > kMaxTextLength) {
    return Invalid(Join(where, key), nullable ? "a string or null" : "a string", *it);
  }
  return Status();
}

Status CheckOptionalBool(const Json& col, const char* key, const std::string& where) {
  auto it = col.find(key);
  if (it == col.end() || it->is_boolean()) return Status();
  return Invalid(Join(where, key), "true or false", *it);
}

Status CheckTransitions(const Json& list, const std::string& where) {
  if (!list.is_array()) return Invalid(where, "an array of {event, target}", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const Json& t = list[i];
    if (!t.is_object()) return Invalid(at, "an object {event, target, condition?, action?}", t);
    for (auto it = t.begin(); it != t.end(); ++it) {
      const std::string& k = it.key();
      if (k != "event" && k != "target" && k != "condition" && k != "action") {
        return InvalidArgumentError(at + ": unknown property " + Quote(k) +
                                    " (allowed: event, target, condition, action)");
      }
    }
    for (const char* k : {"event", "target"}) {
      if (!t.contains(k)) {
        return InvalidArgumentError(at + ": missing required property " + Quote(k));
      }
      if (!t[k].is_string() || t[k].get<std::string>().empty()) {
        return Invalid(at + "." + k, "a non-empty string", t[k]);
      }
    }
    RETURN_IF_ERROR(CheckOptionalText(t, "condition", at, /*nullable=*/true));
    RETURN_IF_ERROR(CheckOptionalText(t, "action", at, /*nullable=*/true));
  }
  return Status();
}

Status CheckKnownKeys(const Json& col, const std::string& where) {
  for (auto it = col.begin(); it != col.end(); ++it) {
    const auto* end = std::end(kColumnKeys);
    if (std::find(std::begin(kColumnKeys), end, it.key()) == end) {
      return InvalidArgumentError(
          (where.empty() ? std::string("column") : where) + ": unknown property " +
          Quote(it.key()) +
          " (allowed: name, label, gate, action, auto_advance, transitions, roles, color, "
          "parallel, on_fail, position)");
    }
  }
  return Status();
}

// One column in full form (defaults filled in), or the first problem.
Result<Json> NormalizeColumn(const Json& item, const std::string& where, IdMode ids) {
  Json col = item.is_string() ? Json{{"name", item}} : item;
  if (!col.is_object()) return Invalid(where, "a column name or a column object", item);
  RETURN_IF_ERROR(CheckKnownKeys(col, where));
  if (!col.contains("name")) {
    return InvalidArgumentError(where + ": missing required property \"name\"");
  }
  if (!col["name"].is_string() || !ValidName(col["name"].get<std::string>())) {
    return Invalid(Join(where, "name"),
                   "a name of letters, digits and . _ - (at most 64, starting with a letter "
                   "or digit)",
                   col["name"]);
  }
  const Json gate_json = col.value("gate", Json("human+agent"));
  const std::string gate = gate_json.is_string() ? gate_json.get<std::string>() : "";
  if (std::find_if(std::begin(kGates), std::end(kGates),
                   [&](const char* g) { return gate == g; }) == std::end(kGates)) {
    return Invalid(Join(where, "gate"), "one of human, agent, human+agent", col["gate"]);
  }
  RETURN_IF_ERROR(CheckOptionalText(col, "label", where, /*nullable=*/false));
  for (const char* key : {"action", "color", "on_fail"}) {
    RETURN_IF_ERROR(CheckOptionalText(col, key, where, /*nullable=*/true));
  }
  RETURN_IF_ERROR(CheckOptionalBool(col, "auto_advance", where));
  RETURN_IF_ERROR(CheckOptionalBool(col, "parallel", where));
  if (col.contains("transitions")) {
    RETURN_IF_ERROR(CheckTransitions(col["transitions"], Join(where, "transitions")));
  }
  const Json roles = col.value("roles", Json::array({"*"}));
  if (!roles.is_array() ||
      !std::all_of(roles.begin(), roles.end(), [](const Json& r) { return r.is_string(); })) {
    return Invalid(Join(where, "roles"), "an array of role names", roles);
  }
  if (col.contains("position") &&
      (!col["position"].is_number_integer() || col["position"].get<int64_t>() < 0)) {
    return Invalid(Join(where, "position"), "a non-negative integer", col["position"]);
  }
  Json out = {{"name", col["name"]},
              {"label", col.value("label", col["name"].get<std::string>())},
              {"gate", gate},
              {"action", col.value("action", Json())},
              {"auto_advance", col.value("auto_advance", false)},
              {"transitions", col.value("transitions", Json::array())},
              {"roles", roles},
              {"color", col.value("color", Json())},
              {"parallel", col.value("parallel", false)},
              {"on_fail", col.value("on_fail", Json())}};
  if (ids == IdMode::kNew || (ids == IdMode::kKeep && !col.contains("id"))) {
    out["id"] = NewId("col");
  } else if (ids == IdMode::kKeep) {
    if (!col["id"].is_string()) return Invalid(Join(where, "id"), "a string", col["id"]);
    out["id"] = col["id"];
  }
  return out;
}

// Checks that the names a column refers to (transition targets, on_fail) are
// columns of the same list.
Status CheckColumnRefs(const Json& columns, const std::function<std::string(size_t)>& where) {
  auto known = [&](const std::string& name) {
    return std::any_of(columns.begin(), columns.end(),
                       [&](const Json& c) { return c["name"] == name; });
  };
  for (size_t i = 0; i < columns.size(); ++i) {
    const Json& c = columns[i];
    const Json& transitions = c["transitions"];
    for (size_t t = 0; t < transitions.size(); ++t) {
      const std::string target = transitions[t]["target"].get<std::string>();
      if (!known(target)) {
        return InvalidArgumentError(
            Join(where(i), "transitions[" + std::to_string(t) + "].target") + ": no column named " +
            Quote(target) + " (columns: " + ColumnNames(columns) + ")");
      }
    }
    if (c["on_fail"].is_string() && !known(c["on_fail"].get<std::string>())) {
      return InvalidArgumentError(Join(where(i), "on_fail") + ": no column named " +
                                  Quote(c["on_fail"].get<std::string>()) +
                                  " (columns: " + ColumnNames(columns) + ")");
    }
  }
  return Status();
}

// Validates "columns" (names or column objects) and returns them in full
// form, ordered by position (array index where missing; ties keep array
// order) and renumbered 0..n-1. "where(i)" names item i in errors.
Result<Json> NormalizeColumns(const Json& columns, const std::function<std::string(size_t)>& where,
                              IdMode ids, const std::string& field) {
  if (!columns.is_array() || columns.empty() || columns.size() > kMaxColumns) {
    return Invalid(field, "an array of 1 to 64 column names or column objects", columns);
  }
  struct Item {
    int64_t key;   // the given position, else the array index
    size_t index;  // the array index, for error messages
    Json column;
  };
  std::vector<Item> ordered;
  for (size_t i = 0; i < columns.size(); ++i) {
    ASSIGN_OR_RETURN(Json col, NormalizeColumn(columns[i], where(i), ids));
    const int64_t key = columns[i].is_object() && columns[i].contains("position")
                            ? columns[i]["position"].get<int64_t>()
                            : static_cast<int64_t>(i);
    for (const Item& seen : ordered) {
      if (seen.column["name"] == col["name"]) {
        return InvalidArgumentError(Join(where(i), "name") + ": column " +
                                    Quote(col["name"].get<std::string>()) +
                                    " appears twice; column names are unique on a board");
      }
    }
    ordered.push_back({key, i, std::move(col)});
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Item& a, const Item& b) { return a.key < b.key; });
  Json out = Json::array();
  for (Item& item : ordered) {
    item.column["position"] = static_cast<int64_t>(out.size());
    out.push_back(item.column);
  }
  RETURN_IF_ERROR(CheckColumnRefs(out, [&](size_t i) { return where(ordered[i].index); }));
  return out;
}

std::function<std::string(size_t)> IndexedField(const std::string& field) {
  return [field](size_t i) { return field + "[" + std::to_string(i) + "]"; };
}

// ---- Templates --------------------------------------------------------------


// The embedded templates, parsed and normalised once. A broken file is a
// build defect; every template operation then reports it as Internal.
const BuiltinTemplates& Builtins() {
  static const BuiltinTemplates* const kBuiltins = [] {
    auto* b = new BuiltinTemplates();
    for (const EmbeddedFile& file : BuiltinBoardTemplateFiles()) {
      Result<Json> doc = ParseJson(file.text, file.name);
      if (!doc.ok() || !(*doc).contains("board_templates")) {
        b->status =
            InternalError(std::string("built-in board templates ") + file.name + " are unreadable");
        continue;
      }
      for (const Json& t : (*doc)["board_templates"]) {
        Result<Json> columns = NormalizeColumns(t.value("columns", Json()), IndexedField("columns"),
                                                IdMode::kDrop, "columns");
        if (!columns.ok()) {
          b->status = InternalError("built-in board template " + JsonText(t, "name") + ": " +
                                    columns.status().message());
          continue;
        }
        b->list.push_back({{"name", JsonText(t, "name")},
                           {"description", JsonText(t, "description")},
                           {"icon", t.value("icon", Json())},
                           {"builtin", true},
                           {"columns", *columns}});
      }
    }
    return b;
  }();
  return *kBuiltins;
}

Json TemplateToJson(const BoardTemplateRow& t) {
  return Json{{"name", t.name},
              {"description", t.description},
              {"icon", OrNull(t.icon)},
              {"builtin", false},
              {"columns", t.columns}};
}

Result<Json> AllTemplates(Txn& txn) {
  RETURN_IF_ERROR(Builtins().status);
  Json list = Builtins().list;
  ASSIGN_OR_RETURN(std::vector<BoardTemplateRow> rows, ListBoardTemplateRows(txn));
  for (const BoardTemplateRow& t : rows) list.push_back(TemplateToJson(t));
  return list;
}

Result<Json> FindTemplate(Txn& txn, const std::string& name, const char* field) {
  ASSIGN_OR_RETURN(Json all, AllTemplates(txn));
  std::vector<std::string> names;
  for (const Json& t : all) {
    if (t["name"] == name) return t;
    names.push_back(JsonText(t, "name"));
  }
  return NotFoundError(std::string(field) + ": no board template named " + Quote(name) +
                       " (templates: " + JoinNames(names) + ")");
}

}  // namespace baton::boards_internal
