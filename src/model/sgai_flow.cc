// sgai flow graphs and GOAL.md (see sgai_flow.h).
#include "model/sgai_flow.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "model/yaml_scalar.h"
#include "util/sha256.h"

namespace baton {
namespace {

using Json = nlohmann::json;
constexpr std::string_view kCoordinator = "coordinator";
constexpr int kMaxDepth = 64;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

Status GoalError(int line, int column, std::string_view reason) {
  std::string msg = "GOAL.md: line " + std::to_string(line);
  if (column > 0) msg += ", column " + std::to_string(column);
  return InvalidArgumentError(msg + ": " + std::string(reason));
}

// {yaml, body} as sgai's splitFrontmatterSections + extractBody cut them: the
// closing delimiter is a line "---" ended by the opening line's line ending
// (or by the end of the text).
Result<std::pair<std::string_view, std::string_view>> SplitGoal(std::string_view text) {
  if (!StartsWith(text, "---")) return std::pair(std::string_view(), text);
  std::string_view rest = text.substr(3);
  std::string_view eol = StartsWith(rest, "\r\n") ? "\r\n" : StartsWith(rest, "\n") ? "\n" : "";
  if (eol.empty()) return GoalError(1, 0, "the opening \"---\" must be alone on its line");
  rest.remove_prefix(eol.size());
  for (size_t line_start = 0;;) {
    std::string_view line = rest.substr(line_start);
    bool dashes = StartsWith(line, "---");
    if (dashes && (line.size() == 3 || StartsWith(line.substr(3), eol))) {
      return std::pair(rest.substr(0, line_start),
                       line.substr(std::min(line.size(), 3 + eol.size())));
    }
    if (dashes && line_start == 0) return GoalError(2, 0, "the closing \"---\" must end its line");
    size_t next = rest.find(eol, line_start);
    if (next == std::string_view::npos) {
      return GoalError(1, 0, "the front matter opened by \"---\" is never closed");
    }
    line_start = next + eol.size();
  }
}


Result<Json> YamlToJson(const YAML::Node& node, int depth) {
  // The YAML starts on GOAL.md line 2; yaml-cpp counts lines from 0.
  if (depth > kMaxDepth) return GoalError(node.Mark().line + 2, 0, "front matter too deep");
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return node.Tag() == "?" ? PlainYamlScalar(node.Scalar()) : Json(node.Scalar());
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& item : node) {
        ASSIGN_OR_RETURN(out.emplace_back(), YamlToJson(item, depth + 1));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        const int key_line = kv.first.Mark().line + 2;
        if (!kv.first.IsScalar()) {
          return GoalError(key_line, 0, "front matter keys must be scalars");
        }
        const std::string& key = kv.first.Scalar();
        if (out.contains(key)) {
          return GoalError(key_line, 0, "front matter repeats the key \"" + key + "\"");
        }
        ASSIGN_OR_RETURN(out[key], YamlToJson(kv.second, depth + 1));
      }
      return out;
    }
    default:  // Null, Undefined
      return Json(nullptr);
  }
}

struct Token {
  char kind = 0;      // 'i' an id, 'p' punctuation or an edge operator, 0 the end
  std::string text;   // the id (unquoted) or the punctuation
  bool bare = false;  // an unquoted id: may be a keyword
  size_t pos = 0;
};

Status DotError(std::string_view s, size_t pos, std::string_view reason) {
  size_t line = 1 + std::count(s.begin(), s.begin() + pos, '\n');
  size_t nl = s.substr(0, pos).rfind('\n');
  size_t column = nl == std::string_view::npos ? pos + 1 : pos - nl;
  return InvalidArgumentError("flow: line " + std::to_string(line) + ", column " +
                              std::to_string(column) + ": " + std::string(reason));
}

bool IsIdStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c & 0x80;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// DOT's quoted ids know one escape, \" (and a backslash-newline
// continuation); other backslashes stay, as gographviz keeps them.
Result<std::vector<Token>> Lex(std::string_view s) {
  std::vector<Token> out;
  auto at = [s](size_t k) { return k < s.size() ? s[k] : '\0'; };
  for (size_t i = 0;;) {
    while (i < s.size()) {
      if (std::string_view(" \t\r\n\f\v").find(s[i]) != std::string_view::npos) {
        ++i;
      } else if (s[i] == '#' || s.substr(i, 2) == "//") {
        i = std::min(s.find('\n', i), s.size());
      } else if (s.substr(i, 2) == "/*") {
        size_t end = s.find("*/", i + 2);
        if (end == std::string_view::npos) return DotError(s, i, "unterminated /* comment");
        i = end + 2;
      } else {
        break;
      }
    }
    Token t{.kind = i < s.size() ? 'i' : '\0', .pos = i};
    char c = at(i), c1 = at(i + 1);
    size_t n = 0;  // the length of a token taken verbatim
    if (i >= s.size()) {
      out.push_back(std::move(t));
      return out;
    } else if (c == '-' && (c1 == '>' || c1 == '-')) {
      t.kind = 'p';
      n = 2;
    } else if (std::string_view("{}[];,:=").find(c) != std::string_view::npos) {
      t.kind = 'p';
      n = 1;
    } else if (IsIdStart(c)) {
      for (t.bare = true; IsIdStart(at(i + n)) || IsDigit(at(i + n));) ++n;
    } else if (IsDigit(c) || (c == '.' && IsDigit(c1)) ||
               (c == '-' && (IsDigit(c1) || c1 == '.'))) {
      for (n = 1; IsDigit(at(i + n)) || at(i + n) == '.';) ++n;
    } else if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] != '\\' || (at(i + 1) != '"' && at(i + 1) != '\n')) {
          t.text += s[i];
        } else if (s[++i] == '"') {
          t.text += '"';
        }
      }
      if (i++ >= s.size()) return DotError(s, t.pos, "unterminated quoted id");
    } else {
      return DotError(s, i,
                      c == '@'   ? "an \"@file\" flow must be read by the caller"
                      : c == '-' ? "unexpected '-' (quote ids that contain '-', e.g. "
                                   "\"general-purpose\")"
                                 : std::string("unexpected character '") + c + "'");
    }
    t.text += s.substr(i, n);
    i += n;
    out.push_back(std::move(t));
  }
}

bool IsKeyword(const Token& t, std::string_view word) {
  return t.bare && std::equal(word.begin(), word.end(), t.text.begin(), t.text.end(),
                              [](char w, char c) { return w == (c | 0x20); });
}

bool IsAnyKeyword(const Token& t) {
  static constexpr std::string_view kWords[] = {"node",    "edge",     "graph",
                                                "digraph", "subgraph", "strict"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&t](auto w) { return IsKeyword(t, w); });
}

// Recursive descent over DOT's grammar; collects nodes and edges in order.
class DotParser {
 public:
  DotParser(std::string_view text, std::vector<Token> toks) : s_(text), t_(std::move(toks)) {}

  Status Parse() {
    if (IsKeyword(Peek(), "strict")) ++pos_;
    if (IsKeyword(Peek(), "graph") && !NextIs("[")) {  // not a "graph [..]" statement
      return Error("undirected \"graph\"; a flow is a digraph");
    }
    if (!IsKeyword(Peek(), "digraph")) {
      if (pos_ > 0) return Error("expected \"digraph\" after \"strict\"");
      RETURN_IF_ERROR(StmtList(0));
      return Peek().kind == 0 ? Status() : Error("unexpected '}'");
    }
    ++pos_;
    if (Peek().kind == 'i' && !IsAnyKeyword(Peek())) ++pos_;
    RETURN_IF_ERROR(Expect("{"));
    RETURN_IF_ERROR(StmtList(1));
    RETURN_IF_ERROR(Expect("}"));
    return Peek().kind == 0 ? Status() : Error("text after the closing '}'");
  }

  std::vector<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> edges;

 private:
  const Token& Peek() const { return t_[pos_]; }
  bool IsPunct(std::string_view p) const { return Peek().kind == 'p' && Peek().text == p; }
  // REQUIRES: Peek() is not the end.
  bool NextIs(std::string_view p) const {
    return t_[pos_ + 1].kind == 'p' && t_[pos_ + 1].text == p;
  }
  bool IsId() const { return Peek().kind == 'i' && !IsAnyKeyword(Peek()); }
  Status Error(std::string_view reason) const { return DotError(s_, Peek().pos, reason); }
  Status Found(std::string_view expected) const {
    return Error("expected " + std::string(expected) + ", found " +
                 (Peek().kind == 0 ? "the end of the flow" : "'" + Peek().text + "'"));
  }
  bool Take(std::string_view p) {
    if (!IsPunct(p)) return false;
    ++pos_;
    return true;
  }
  Status Expect(std::string_view p) {
    return Take(p) ? Status() : Found("'" + std::string(p) + "'");
  }
  // An id where no keyword is special: a port, an attribute or its value.
  Status TakeId(std::string_view what) {
    if (Peek().kind != 'i') return Found(what);
    ++pos_;
    return Status();
  }

  Status StmtList(int depth) {
    if (depth > kMaxDepth) return Error("subgraphs nested too deeply");
    while (Peek().kind != 0 && !IsPunct("}")) {
      RETURN_IF_ERROR(Stmt(depth));
      Take(";");
    }
    return Status();
  }

  Status Stmt(int depth) {
    if (IsKeyword(Peek(), "graph") || IsKeyword(Peek(), "node") || IsKeyword(Peek(), "edge")) {
      ++pos_;
      return IsPunct("[") ? AttrLists() : Found("'['");
    }
    if (IsId() && NextIs("=")) {
      pos_ += 2;  // a graph attribute such as rankdir=LR
      return TakeId("a value");
    }
    std::vector<std::string> left;
    RETURN_IF_ERROR(Operand(depth, &left));
    while (IsPunct("->") || IsPunct("--")) {
      if (IsPunct("--")) return Error("undirected edge '--' in a digraph");
      ++pos_;
      std::vector<std::string> right;
      RETURN_IF_ERROR(Operand(depth, &right));
      for (const std::string& a : left) {
        for (const std::string& b : right) {
          if (edge_set_.emplace(a, b).second) edges.emplace_back(a, b);  // repeats count once
        }
      }
      left = std::move(right);
    }
    return AttrLists();
  }

  // A node id (its port ignored) or a subgraph, as the list of its nodes.
  Status Operand(int depth, std::vector<std::string>* out) {
    if (IsKeyword(Peek(), "subgraph") || IsPunct("{")) {
      if (IsKeyword(Peek(), "subgraph")) {
        ++pos_;
        if (IsId()) ++pos_;  // the subgraph's name
      }
      size_t mark = mentions_.size();
      RETURN_IF_ERROR(Expect("{"));
      RETURN_IF_ERROR(StmtList(depth + 1));
      RETURN_IF_ERROR(Expect("}"));
      out->assign(mentions_.begin() + mark, mentions_.end());  // repeats: edges count once
      return Status();
    }
    if (!IsId()) return Found("an agent id");
    if (Peek().text.empty()) return Error("an agent id may not be empty");
    std::string name = t_[pos_++].text;
    for (int port = 0; port < 2 && Take(":"); ++port) RETURN_IF_ERROR(TakeId("a port"));
    mentions_.push_back(name);
    if (known_.insert(name).second) nodes.push_back(name);
    out->push_back(std::move(name));
    return Status();
  }

  // Zero or more "[a=b, c=d; e]" lists, all ignored.
  Status AttrLists() {
    while (Take("[")) {
      while (!Take("]")) {
        RETURN_IF_ERROR(TakeId("an attribute"));
        if (Take("=")) RETURN_IF_ERROR(TakeId("a value"));
        if (!Take(",")) Take(";");
      }
    }
    return Status();
  }

  std::string_view s_;
  std::vector<Token> t_;
  size_t pos_ = 0;
  std::vector<std::string> mentions_;
  std::set<std::string> known_;
  std::set<std::pair<std::string, std::string>> edge_set_;
};

// The first cycle met walking "agents" in order, as "a -> b -> a"; empty when
// there is none. Iterative, so a long chain cannot exhaust the stack.
std::string FindCycle(const std::vector<std::string>& agents,
                      const std::vector<std::pair<std::string, std::string>>& edges) {
  std::map<std::string, size_t> index;
  for (size_t k = 0; k < agents.size(); ++k) index.emplace(agents[k], k);
  std::vector<std::vector<size_t>> succ(agents.size());
  for (const auto& [from, to] : edges) succ[index.at(from)].push_back(index.at(to));
  std::vector<int> color(agents.size(), 0);  // 0 new, 1 on the path, 2 done
  for (size_t root = 0; root < agents.size(); ++root) {
    if (color[root] != 0) continue;
    std::vector<std::pair<size_t, size_t>> path = {{root, 0}};  // node, next successor
    color[root] = 1;
    while (!path.empty()) {
      auto& [node, next] = path.back();
      if (next == succ[node].size()) {
        color[node] = 2;
        path.pop_back();
        continue;
      }
      size_t s = succ[node][next++];
      if (color[s] == 0) {
        color[s] = 1;
        path.emplace_back(s, 0);
      } else if (color[s] == 1) {
        auto it =
            std::find_if(path.begin(), path.end(), [s](const auto& p) { return p.first == s; });
        std::string out;
        for (; it != path.end(); ++it) out += agents[it->first] + " -> ";
        return out + agents[s];
      }
    }
  }
  return "";
}

// "arr" as a list of non-empty strings; "where" names it in errors.
Result<std::vector<std::string>> StringList(const Json& arr, const std::string& where) {
  if (!arr.is_array()) return InvalidArgumentError("sgai flow: " + where + ": must be an array");
  std::vector<std::string> out;
  for (const Json& item : arr) {
    if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
      return InvalidArgumentError("sgai flow: " + where + "[" + std::to_string(out.size()) +
                                  "]: must be a non-empty string");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

Result<GoalDocument> ParseGoalMarkdown(std::string_view text) {
  ASSIGN_OR_RETURN(auto split, SplitGoal(text));
  GoalDocument doc{.body = std::string(split.second), .body_checksum = Sha256Hex(split.second)};
  try {
    YAML::Node root = YAML::Load(std::string(split.first));
    if (root.IsNull() || !root.IsDefined()) return doc;
    if (!root.IsMap()) return GoalError(root.Mark().line + 2, 0, "front matter is not a mapping");
    ASSIGN_OR_RETURN(doc.front_matter, YamlToJson(root, 0));
  } catch (const YAML::Exception& e) {
    return GoalError(e.mark.line + 2, e.mark.column + 1,
                     "front matter is not valid YAML: " + e.msg);
  }
  return doc;
}

Result<SgaiFlow> SgaiFlow::FromDot(std::string_view dot) {
  // sgai's parseFlow: only an empty spec is the default flow.
  std::string_view text = dot.empty() ? "\"coordinator\" -> \"general-purpose\"" : dot;
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  DotParser parser(text, std::move(tokens));
  RETURN_IF_ERROR(parser.Parse());
  if (parser.nodes.empty()) return InvalidArgumentError("flow: no agents");
  SgaiFlow flow;
  flow.agents_.emplace_back(kCoordinator);
  for (const std::string& n : parser.nodes) {
    if (n != kCoordinator) flow.agents_.push_back(n);
  }
  flow.edges_ = parser.edges;
  std::set<std::string> has_pred;
  for (const auto& e : flow.edges_) has_pred.insert(e.second);
  for (const std::string& a : flow.agents_) {
    if (a != kCoordinator && !has_pred.count(a)) flow.entries_.push_back(a);
  }
  std::sort(flow.entries_.begin(), flow.entries_.end());
  for (const std::string& e : flow.entries_) flow.edges_.emplace_back(kCoordinator, e);
  if (std::string cycle = FindCycle(flow.agents_, flow.edges_); !cycle.empty()) {
    return InvalidArgumentError("flow: cycle: " + cycle);
  }
  return flow;
}

Result<SgaiFlow> SgaiFlow::FromJson(const nlohmann::json& j) {
  auto bad = [](const std::string& what) { return InvalidArgumentError("sgai flow: " + what); };
  if (!j.is_object()) return bad("must be an object");
  for (const auto& item : j.items()) {
    if (item.key() != "agents" && item.key() != "edges" && item.key() != "entries") {
      return bad(item.key() + ": unknown field");
    }
  }
  SgaiFlow flow;
  ASSIGN_OR_RETURN(flow.agents_, StringList(j.value("agents", Json()), "agents"));
  ASSIGN_OR_RETURN(flow.entries_, StringList(j.value("entries", Json()), "entries"));
  std::set<std::string> known(flow.agents_.begin(), flow.agents_.end());
  if (flow.agents_.empty() || flow.agents_[0] != kCoordinator ||
      known.size() != flow.agents_.size()) {
    return bad("agents: must start with \"coordinator\" and not repeat");
  }
  for (size_t k = 0; k < flow.entries_.size(); ++k) {
    if (!known.count(flow.entries_[k]) || flow.entries_[k] == kCoordinator) {
      return bad("entries[" + std::to_string(k) + "]: \"" + flow.entries_[k] +
                 "\" is not an agent other than coordinator");
    }
  }
  const Json edges = j.value("edges", Json());
  if (!edges.is_array()) return bad("edges: must be an array");
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t k = 0; k < edges.size(); ++k) {
    std::string where = "edges[" + std::to_string(k) + "]";
    ASSIGN_OR_RETURN(std::vector<std::string> pair, StringList(edges[k], where));
    if (pair.size() != 2 || !known.count(pair[0]) || !known.count(pair[1])) {
      return bad(where + ": must be [from, to], naming two agents");
    }
    if (!seen.emplace(pair[0], pair[1]).second) return bad(where + ": repeats an edge");
    flow.edges_.emplace_back(pair[0], pair[1]);
  }
  if (std::string cycle = FindCycle(flow.agents_, flow.edges_); !cycle.empty()) {
    return bad("edges: cycle: " + cycle);
  }
  return flow;
}

std::vector<std::string> SgaiFlow::Successors(std::string_view agent) const {
  std::vector<std::string> out;
  for (const auto& [from, to] : edges_) {
    if (from == agent) out.push_back(to);
  }
  return out;
}

bool SgaiFlow::HasAgent(std::string_view agent) const {
  return std::find(agents_.begin(), agents_.end(), agent) != agents_.end();
}

bool SgaiFlow::IsTerminal(std::string_view agent) const {
  return HasAgent(agent) && Successors(agent).empty();
}

nlohmann::json SgaiFlow::ToJson() const {
  // nlohmann writes each std::pair as a two-element array.
  return Json{{"agents", agents_}, {"edges", edges_}, {"entries", entries_}};
}

NextAgent PickNextAgent(const SgaiFlow& flow, std::string_view current,
                        std::string_view first_unread_recipient) {
  if (!first_unread_recipient.empty()) {
    return {std::string(first_unread_recipient.substr(0, first_unread_recipient.find(':'))),
            "unread_message"};
  }
  if (flow.IsTerminal(current)) return {std::string(kCoordinator), "terminal_to_coordinator"};
  // A flow that names the coordinator itself has no other entry: its own
  // successor follows.
  if (current == kCoordinator && !flow.Entries().empty()) {
    return {flow.Entries().front(), "coordinator_to_entry"};
  }
  const std::vector<std::string> successors = flow.Successors(current);
  if (successors.empty()) return {std::string(kCoordinator), "unknown_agent_to_coordinator"};
  return {successors.front(), "dag_successor"};
}

}  // namespace baton
