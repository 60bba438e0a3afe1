// GraphMermaid: a definition as a Mermaid flowchart.

#include <algorithm>
#include <iterator>
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
  explicit Diagram(const GraphDef& def) : def_(def) {}

  std::string Render() {
    std::ostringstream edges;
    for (size_t i = 0; i < def_.nodes.size(); ++i) Edges(i, edges);
    std::ostringstream out;
    out << "flowchart TD\n";
    if (!def_.nodes.empty()) out << "    start((start)) --> n0\n";
    for (size_t i = 0; i < def_.nodes.size(); ++i) {
      const GraphNode& n = def_.nodes[i];
      out << "    n" << i << "[\"" << EscapeLabel(n.name) << "<br/>" << EscapeLabel(n.type)
          << "\"]\n";
    }
    if (used_.count("t_end") > 0) out << "    t_end([\"END\"])\n";
    if (used_.count("t_error") > 0) out << "    t_error([\"ERROR\"])\n";
    if (used_.count("missing") > 0) out << "    missing[\"(no such node)\"]\n";
    out << edges.str();
    return out.str();
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

  const GraphDef& def_;
  std::set<std::string> used_;
};

}  // namespace

std::string GraphMermaid(const GraphDef& def) { return Diagram(def).Render(); }

}  // namespace baton
