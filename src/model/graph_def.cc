// Reading a graph definition: text to a JSON document (YAML or JSON), the
// document to a GraphDef, collecting shape problems (wrong value types,
// unknown keys) as it goes. The semantic checks are in graph_check.cc.

#include "model/graph_def.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "model/yaml_scalar.h"

namespace baton {
namespace {

constexpr int kMaxDepth = 100;
// A definition generated wrong can have thousands of problems; the first
// ones say what to fix.
constexpr size_t kMaxListedProblems = 100;
// Aliases let a small file expand to a huge tree ("billion laughs").
constexpr int64_t kMaxYamlNodes = 1'000'000;


Status YamlError(std::string_view source, const YAML::Mark& mark, const std::string& why) {
  const int line = mark.line + 1;
  const int column = mark.column + 1;
  return Status(StatusCode::kInvalidArgument,
                std::string(source) + ": not valid YAML: line " + std::to_string(line) +
                    ", column " + std::to_string(column) + ": " + why,
                Json{{"source", source}, {"line", line}, {"column", column}});
}

Result<Json> YamlToJson(const YAML::Node& node, std::string_view source, int depth,
                        int64_t* budget) {
  if (depth > kMaxDepth) return YamlError(source, node.Mark(), "nested too deeply");
  if (--*budget < 0) return YamlError(source, node.Mark(), "too many values (aliases?)");
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return node.Tag() == "?" ? PlainYamlScalar(node.Scalar()) : Json(node.Scalar());
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& item : node) {
        ASSIGN_OR_RETURN(out.emplace_back(), YamlToJson(item, source, depth + 1, budget));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) return YamlError(source, kv.first.Mark(), "keys must be scalars");
        const std::string& key = kv.first.Scalar();
        if (out.contains(key)) {
          return YamlError(source, kv.first.Mark(), "the key \"" + key + "\" appears twice");
        }
        ASSIGN_OR_RETURN(out[key], YamlToJson(kv.second, source, depth + 1, budget));
      }
      return out;
    }
    default:  // Null, Undefined
      return Json(nullptr);
  }
}

Result<Json> ParseYaml(std::string_view text, std::string_view source) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    int64_t budget = kMaxYamlNodes;
    return YamlToJson(root, source, 0, &budget);
  } catch (const YAML::Exception& e) {
    return YamlError(source, e.mark, e.msg);
  }
}

// JSON for text that looks like it ("{" first), so its errors are JSON's; a
// YAML flow mapping also starts with "{" and is accepted as YAML.
Result<Json> ParseDocumentText(std::string_view text, std::string_view source) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    Result<Json> json = ParseJson(text, source);
    if (json.ok()) return json;
    Result<Json> yaml = ParseYaml(text, source);
    return yaml.ok() ? yaml : json;
  }
  return ParseYaml(text, source);
}

class ShapeReader {
 public:
  explicit ShapeReader(std::vector<GraphProblem>* problems) : problems_(problems) {}

  void Add(std::string node, std::string field, std::string message) {
    problems_->push_back({std::move(node), std::move(field), std::move(message)});
  }

  // Copies a string member into "*out"; a present non-string is a problem.
  void String(const Json& obj, const char* key, const std::string& node, std::string* out) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return;
    if (it->is_string()) {
      *out = it->get<std::string>();
    } else {
      Add(node, key, "must be a string");
    }
  }

  // An integer member within [lo, hi]; false (with a problem) otherwise.
  bool Integer(const Json& obj, const char* key, const std::string& node, const std::string& field,
               int64_t lo, int64_t hi, int64_t* out) {
    auto it = obj.find(key);
    if (it == obj.end()) return false;
    const bool in_range =
        it->is_number_integer() &&
        (it->is_number_unsigned() ? it->get<uint64_t>() <= uint64_t(hi)
                                  : it->get<int64_t>() >= lo && it->get<int64_t>() <= hi);
    if (!in_range) {
      Add(node, field,
          "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
      return false;
    }
    *out = it->get<int64_t>();
    return true;
  }

  void Keys(const Json& obj, std::initializer_list<const char*> allowed, const std::string& node,
            const std::string& prefix) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      std::string list;
      for (const char* k : allowed) {
        known = known || it.key() == k;
        list += std::string(list.empty() ? "" : ", ") + k;
      }
      if (!known) Add(node, prefix + it.key(), "unknown key (allowed: " + list + ")");
    }
  }

  void Retry(const Json& retry, const std::string& node, GraphRetry* out) {
    if (!retry.is_object()) return Add(node, "retry", "must be a mapping {max, backoffMs}");
    Keys(retry, {"max", "backoffMs"}, node, "retry.");
    int64_t value = 0;
    if (!retry.contains("max")) Add(node, "retry.max", "is required");
    if (Integer(retry, "max", node, "retry.max", 0, 100, &value)) out->max = int(value);
    if (Integer(retry, "backoffMs", node, "retry.backoffMs", 0, 3'600'000, &value)) {
      out->backoff_ms = value;
    }
  }

  void Case(const Json& c, const std::string& node, const std::string& field, GraphCase* out) {
    if (!c.is_object()) return Add(node, field, "must be a mapping {when, goto}");
    Keys(c, {"when", "goto"}, node, field + ".");
    if (auto when = c.find("when"); when != c.end()) {
      if (when->is_string()) {
        out->when = when->get<std::string>();
      } else {
        Add(node, field + ".when", "must be a string (a Lua expression)");
      }
    }
    if (auto go = c.find("goto"); go != c.end() && !go->is_string()) {
      Add(node, field + ".goto", "must be a string (a node, END or ERROR)");
    } else if (go != c.end()) {
      out->target = go->get<std::string>();
    }
  }

  void Routing(const Json& then, const std::string& node, GraphRouting* out) {
    if (then.is_string()) {
      out->kind = GraphRouting::Kind::kStatic;
      out->target = then.get<std::string>();
    } else if (then.is_array()) {
      out->kind = GraphRouting::Kind::kCases;
      for (size_t i = 0; i < then.size(); ++i) {
        Case(then[i], node, "then[" + std::to_string(i) + "]", &out->cases.emplace_back());
      }
    } else if (then.is_object() && then.size() == 1 && then.contains("lua") &&
               then["lua"].is_string()) {
      out->kind = GraphRouting::Kind::kLua;
      out->lua = then["lua"].get<std::string>();
    } else {
      Add(node, "then",
          "must be a target (a node, END or ERROR), a list of {when, goto} cases, or {lua: CODE}");
    }
  }

  void Node(const Json& obj, size_t index, GraphNode* node) {
    const std::string at = "nodes[" + std::to_string(index) + "]";
    if (!obj.is_object()) return Add(at, "", "must be a mapping with name, type and then");
    String(obj, "name", at, &node->name);
    // As the checks name it: a repeated name also gives the position.
    const std::string label = node->name.empty()                 ? at
                              : names_.insert(node->name).second ? node->name
                                                                 : node->name + " (" + at + ")";
    String(obj, "type", label, &node->type);
    if (auto it = obj.find("resultKey"); it != obj.end()) {
      String(obj, "resultKey", label, &node->result_key);
      if (it->is_string() && node->result_key.empty()) Add(label, "resultKey", "must not be empty");
    }
    if (auto it = obj.find("retry"); it != obj.end()) Retry(*it, label, &node->retry);
    if (auto it = obj.find("then"); it != obj.end()) Routing(*it, label, &node->then);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      static constexpr const char* kCommon[] = {"name", "type", "resultKey", "retry", "then"};
      if (std::find(std::begin(kCommon), std::end(kCommon), it.key()) == std::end(kCommon)) {
        node->options[it.key()] = it.value();
      }
    }
  }

  void Document(const Json& doc, GraphDef* def) {
    if (!doc.is_object()) {
      return Add("", "",
                 doc.is_null() ? "the document is empty"
                               : "must be a mapping with id, initialContext and nodes");
    }
    Keys(doc, {"id", "description", "initialContext", "nodes"}, "", "");
    String(doc, "id", "", &def->id);
    String(doc, "description", "", &def->description);
    if (auto it = doc.find("initialContext"); it != doc.end()) {
      if (it->is_object()) {
        def->initial_context = *it;
      } else {
        Add("", "initialContext", "must be a mapping");
      }
    }
    auto nodes = doc.find("nodes");
    if (nodes == doc.end()) return;
    if (!nodes->is_array()) return Add("", "nodes", "must be a list of nodes");
    for (size_t i = 0; i < nodes->size(); ++i) Node((*nodes)[i], i, &def->nodes.emplace_back());
  }

 private:
  std::vector<GraphProblem>* problems_;
  std::set<std::string> names_;  // node names read so far
};

// A check's problem about a field (or node) the reader already found wrong
// says the same thing again.
bool AlreadyReported(const std::vector<GraphProblem>& shape, const GraphProblem& p) {
  for (const GraphProblem& s : shape) {
    if (s.node == p.node && (s.field.empty() || s.field == p.field)) return true;
  }
  return false;
}

void FillDefaults(GraphDef* def) {
  for (GraphNode& node : def->nodes) {
    const GraphNodeType* type = FindGraphNodeType(node.type);
    // REQUIRES: the definition was checked, so every type is known.
    if (type == nullptr) continue;
    if (node.result_key.empty()) node.result_key = type->result_key;
    Json options = Json::parse(type->defaults);
    options.update(node.options);
    node.options = std::move(options);
  }
}

}  // namespace

const std::string& GraphDef::entry() const {
  static const std::string kNone;
  return nodes.empty() ? kNone : nodes.front().name;
}

const GraphNode* GraphDef::Find(std::string_view name) const {
  for (const GraphNode& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

Result<GraphDef> ParseGraphDef(std::string_view text, std::string_view source) {
  ASSIGN_OR_RETURN(Json doc, ParseDocumentText(text, source));
  GraphDef def;
  def.source = source;
  std::vector<GraphProblem> problems;
  ShapeReader(&problems).Document(doc, &def);
  const std::vector<GraphProblem> shape = problems;
  if (doc.is_object()) {
    for (GraphProblem& p : FindGraphProblems(def)) {
      if (!AlreadyReported(shape, p)) problems.push_back(std::move(p));
    }
  }
  if (!problems.empty()) return GraphProblemsStatus(source, problems);
  FillDefaults(&def);
  return def;
}

Status GraphProblemsStatus(std::string_view source, const std::vector<GraphProblem>& problems) {
  if (problems.empty()) return Status();
  std::string message = std::string(source) + ": " + std::to_string(problems.size()) +
                        " problem(s) in the graph definition";
  Json list = Json::array();
  for (size_t i = 0; i < problems.size() && i < kMaxListedProblems; ++i) {
    const GraphProblem& p = problems[i];
    message += "\n" + std::string(source) + ": ";
    if (!p.node.empty()) message += "node " + p.node + ": ";
    if (!p.field.empty()) message += p.field + ": ";
    message += p.message;
    list.push_back({{"node", p.node}, {"field", p.field}, {"message", p.message}});
  }
  const size_t omitted = problems.size() - list.size();
  if (omitted > 0) message += "\n... and " + std::to_string(omitted) + " more";
  return Status(StatusCode::kInvalidArgument, std::move(message),
                Json{{"source", source}, {"problems", list}, {"omitted", omitted}});
}

Status CheckGraphDef(const GraphDef& def) {
  return GraphProblemsStatus(def.source, FindGraphProblems(def));
}

}  // namespace baton
