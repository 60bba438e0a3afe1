// Graph workflow definitions (docs/graph.md): graph.check and graph.mermaid.
// Both read a definition from a file or from the input's text and touch no
// store.

#include <filesystem>

#include "model/graph_def.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

constexpr int64_t kMaxDefinitionBytes = int64_t{4} << 20;

Json DefinitionInput() {
  Json file = s::String(
      "the definition's path, YAML or JSON (the CLI makes a relative one "
      "absolute)",
      4096);
  file["x-baton-path"] = true;
  return s::Input(
      {{"file", file},
       {"text", s::String("the definition's text, instead of a file",
                          static_cast<int>(kMaxDefinitionBytes))},
       {"source", s::String("the name messages give the text (default: the file)", 4096)}});
}

Result<GraphDef> LoadDefinition(const Json& in) {
  const bool has_file = in.contains("file");
  if (has_file == in.contains("text")) {
    return InvalidArgumentError("give exactly one of file and text (a definition's YAML or JSON)");
  }
  std::string source = in.value("source", "");
  std::string text;
  if (has_file) {
    const std::string path = in["file"].get<std::string>();
    // Any caller (over HTTP and MCP too) may name a file: only definition
    // files are read, so no other file's contents reach an error message.
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json") {
      return InvalidArgumentError("file: " + path + ": a graph definition is a .yaml, .yml or .json file");
    }
    ASSIGN_OR_RETURN(text, ReadFile(path, kMaxDefinitionBytes));
    if (source.empty()) source = path;
  } else {
    text = in["text"].get<std::string>();
    if (source.empty()) source = "<text>";
  }
  return ParseGraphDef(text, source);
}

Result<Json> GraphCheck(OpContext&, const Json& in) {
  ASSIGN_OR_RETURN(GraphDef def, LoadDefinition(in));
  Json nodes = Json::array();
  for (const GraphNode& n : def.nodes) {
    nodes.push_back({{"name", n.name}, {"type", n.type}, {"result_key", n.result_key}});
  }
  return Json{{"ok", true},
              {"id", def.id},
              {"source", def.source},
              {"entry", def.entry()},
              {"nodes", nodes}};
}

Result<Json> GraphMermaidOp(OpContext&, const Json& in) {
  ASSIGN_OR_RETURN(GraphDef def, LoadDefinition(in));
  return Json{{"mermaid", GraphMermaid(def)}};
}

Json Str() { return {{"type", "string"}}; }

}  // namespace

Status RegisterGraphOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "graph.check",
      .summary = "Check a graph workflow definition (YAML or JSON): every problem, naming the "
                 "file, node and field",
      .input_schema = DefinitionInput(),
      .output_schema = s::Entity(
          {{"ok", {{"type", "boolean"}}},
           {"id", Str()},
           {"source", Str()},
           {"entry", Str()},
           {"nodes",
            {{"type", "array"},
             {"items", s::Entity({{"name", Str()}, {"type", Str()}, {"result_key", Str()}})}}}}),
      .positional = {"file"},
      .handler = GraphCheck,
      .uses_store = false,
  }));
  return r.Add({
      .name = "graph.mermaid",
      .summary = "A checked graph workflow definition as a Mermaid flowchart",
      .input_schema = DefinitionInput(),
      .output_schema = s::Entity({{"mermaid", Str()}}),
      .positional = {"file"},
      .handler = GraphMermaidOp,
      .uses_store = false,
      .render_text = [](const Json& out) { return out["mermaid"].get<std::string>(); },
  });
}

}  // namespace baton
