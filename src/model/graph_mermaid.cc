// GraphMermaid: a definition as a Mermaid flowchart.

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "model/graph_def.h"

namespace baton {
namespace {

constexpr size_t kMaxLabel = 40;

// Mermaid entity codes for what would end or confuse a quoted label.
constexpr std::pair<char, const char*> kEntities[] = {
    {'"', "#quot;"}, {'#', "#35;"}, {'<', "#lt;"}, {'>', "#gt;"}, {'&', "#amp;"}, {'|', "#124;"}};

// "text" with its whitespace collapsed to single spaces and kEntities coded.
std::string EscapeLabel(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    const auto* e = std::find_if(std::begin(kEntities), std::end(kEntities),
                                 [c](const auto& entity) { return entity.first == c; });
    if (e != std::end(kEntities)) {
      out += e->second;
    } else {
      out += c;
    }
  }
  return out;
}

// At most kMaxLabel bytes of "text" (whitespace collapsed), never cutting a
// UTF-8 sequence, with "..." when cut.
std::string Shorten(std::string_view text) {
  std::string flat;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (blank && (flat.empty() || flat.back() == ' ')) continue;
    flat += blank ? ' ' : c;
  }
  while (!flat.empty() && flat.back() == ' ') flat.pop_back();
  if (flat.size() <= kMaxLabel) return flat;
  size_t cut = kMaxLabel - 3;
  while (cut > 0 && (static_cast<unsigned char>(flat[cut]) & 0xC0) == 0x80) --cut;
  return flat.substr(0, cut) + "...";
}

class Diagram {
 public:
  explicit Diagram(const GraphDef& def, const GraphPath* path = nullptr) : def_(def), path_(path) {}

  std::string Render() {
    std::ostringstream edges;
    for (size_t i = 0; i < def_.nodes.size(); ++i) Edges(i, edges);
    std::ostringstream out;
    out << "flowchart TD\n";
    if (!def_.nodes.empty()) out << "    start((start)) --> n0\n";
    for (size_t i = 0; i < def_.nodes.size(); ++i) {
      const GraphNode& n = def_.nodes[i];
      out << "    n" << i << "[\"" << EscapeLabel(n.name) << "<br/>" << EscapeLabel(n.type);
      if (path_ != nullptr && visits_.count(n.name) > 0) out << "<br/>ran " << visits_[n.name] << "x";
      out << "\"]\n";
    }
    if (used_.count("t_end") > 0) out << "    t_end([\"END\"])\n";
    if (used_.count("t_error") > 0) out << "    t_error([\"ERROR\"])\n";
    if (used_.count("missing") > 0) out << "    missing[\"(no such node)\"]\n";
    out << edges.str();
    if (path_ != nullptr) out << path_edges_.str() << Classes();
    return out.str();
  }

  // The path's edges, one per transition taken, labelled with the
  // executions that took it; called before Render so its targets count.
  void TracePath() {
    std::vector<std::pair<std::string, std::vector<int64_t>>> taken;  // "from to" -> seqs
    for (const GraphStep& s : path_->steps) {
      if (s.node.empty()) continue;
      ++visits_[s.node];
      if (s.outcome == "failed") failed_.insert(s.node);
      const std::string key = Id(s.node) + " " + Id(s.next);
      auto it = std::find_if(taken.begin(), taken.end(), [&](const auto& t) { return t.first == key; });
      if (it == taken.end()) {
        taken.push_back({key, {s.seq}});
      } else {
        it->second.push_back(s.seq);
      }
    }
    for (const auto& [key, seqs] : taken) {
      std::string label;
      for (size_t i = 0; i < seqs.size() && i < 5; ++i) {
        label += (i == 0 ? "#" : ", #") + std::to_string(seqs[i]);
      }
      if (seqs.size() > 5) label += ", +" + std::to_string(seqs.size() - 5);
      const size_t space = key.find(' ');
      path_edges_ << "    " << key.substr(0, space) << " ==>|\"" << label << "\"| "
                  << key.substr(space + 1) << "\n";
    }
    if (!path_->current.empty()) current_ = Id(path_->current);
  }

 private:
  std::string Id(const std::string& target) {
    std::string id = "missing";
    if (target == kGraphEnd) {
      id = "t_end";
    } else if (target == kGraphError) {
      id = "t_error";
    } else {
      for (size_t i = 0; i < def_.nodes.size(); ++i) {
        if (!target.empty() && def_.nodes[i].name == target) {
          id = "n" + std::to_string(i);
          break;
        }
      }
    }
    used_.insert(id);
    return id;
  }

  void Edges(size_t i, std::ostringstream& out) {
    const std::string from = "    n" + std::to_string(i);
    const GraphRouting& r = def_.nodes[i].then;
    switch (r.kind) {
      case GraphRouting::Kind::kStatic:
        out << from << " --> " << Id(r.target) << "\n";
        break;
      case GraphRouting::Kind::kCases:
        for (const GraphCase& c : r.cases) {
          const std::string label = c.when ? "\"" + EscapeLabel(Shorten(*c.when)) + "\"" : "else";
          out << from << " -->|" << label << "| " << Id(c.target) << "\n";
        }
        break;
      case GraphRouting::Kind::kLua:
        out << from << " -.->|lua| n" << i << "_next{{\"?\"}}\n";
        break;
      case GraphRouting::Kind::kNone:
        break;
    }
  }

  std::string Classes() {
    std::string visited, failed;
    for (size_t i = 0; i < def_.nodes.size(); ++i) {
      const std::string id = "n" + std::to_string(i);
      if (failed_.count(def_.nodes[i].name) > 0) {
        failed += (failed.empty() ? "" : ",") + id;
      } else if (visits_.count(def_.nodes[i].name) > 0) {
        visited += (visited.empty() ? "" : ",") + id;
      }
    }
    std::string out =
        "    classDef visited fill:#dcfce7,stroke:#16a34a\n"
        "    classDef failed fill:#fee2e2,stroke:#dc2626\n"
        "    classDef current fill:#fef9c3,stroke:#ca8a04,stroke-width:3px\n";
    if (!visited.empty()) out += "    class " + visited + " visited\n";
    if (!failed.empty()) out += "    class " + failed + " failed\n";
    if (!current_.empty()) out += "    class " + current_ + " current\n";
    return out;
  }

  const GraphDef& def_;
  const GraphPath* path_;
  std::set<std::string> used_;
  std::map<std::string, int64_t> visits_;
  std::set<std::string> failed_;
  std::ostringstream path_edges_;
  std::string current_;
};

}  // namespace

std::string GraphMermaid(const GraphDef& def) { return Diagram(def).Render(); }

std::string GraphPathMermaid(const GraphDef& def, const GraphPath& path) {
  Diagram d(def, &path);
  d.TracePath();
  return d.Render();
}

}  // namespace baton
