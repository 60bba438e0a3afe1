// Text output for people: no operation's result prints raw JSON in text
// mode (issue 17). Every operation's output schema gives a sample result
// (every field filled, lists of two, nested objects), rendered as the CLI
// renders it; no line of it may read as JSON.

#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.h"
#include "cli/verbs.h"

namespace baton {
namespace {

const Json& FirstNonNull(const Json& alternatives) {
  for (const Json& a : alternatives) {
    if (a.value("type", Json()) != "null") return a;
  }
  return alternatives[0];
}

// A value the schema accepts, with every property present.
Json Sample(const Json& schema, int depth = 0) {
  if (!schema.is_object() || depth > 8) return "text";
  for (const char* key : {"anyOf", "oneOf"}) {
    if (schema.contains(key)) return Sample(FirstNonNull(schema[key]), depth + 1);
  }
  if (schema.contains("enum")) return schema["enum"][0];
  if (schema.contains("const")) return schema["const"];
  Json type = schema.value("type", Json());
  if (type.is_array()) {
    for (const Json& t : type) {
      if (t != "null") {
        type = t;
        break;
      }
    }
  }
  if (type.is_null()) type = schema.contains("properties") ? "object" : "string";
  if (type == "object") {
    Json out = Json::object();
    const Json properties = schema.value("properties", Json::object());
    for (auto& [name, property] : properties.items()) {
      out[name] = Sample(property, depth + 1);
    }
    if (out.empty()) {
      // A free-form object (a run's context, an agent's meta): nested, as
      // users fill them.
      out = {{"plan", "text"}, {"limits", {{"max", 3}, {"tags", {"a", "b"}}}}};
    }
    return out;
  }
  if (type == "array") {
    // Items of no stated shape are objects, as every list baton returns holds.
    const Json item = Sample(schema.value("items", Json{{"type", "object"}}), depth + 1);
    return Json::array({item, item});
  }
  if (type == "integer") return 3;
  if (type == "number") return 1.5;
  if (type == "boolean") return true;
  return "text";
}

// A line that reads as JSON: an object or list opened, or a "key": pair.
bool LooksLikeJson(const std::string& line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos) return false;
  const char first = line[start];
  return first == '{' || first == '[' || line.find("{\"") != std::string::npos ||
         line.find("\":") != std::string::npos || line.find("[{") != std::string::npos;
}

TEST(CliText, NoOperationPrintsRawJsonInTextMode) {
  int checked = 0;
  for (const Operation* op : CommandEnv::StaticRegistry().All()) {
    const Json result = Sample(op->output_schema);
    std::string text;
    try {
      text = RenderText(op->name, result);
    } catch (const std::exception& e) {
      ADD_FAILURE() << op->name << ": rendering a sample result threw: " << e.what();
      continue;
    }
    EXPECT_FALSE(text.empty()) << op->name;
    std::istringstream lines(text);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
      ++n;
      EXPECT_FALSE(LooksLikeJson(line)) << op->name << " line " << n << ": " << line
                                        << "\n--- whole output ---\n" << text;
    }
    ++checked;
  }
  EXPECT_GT(checked, 100);  // the whole registry, not a few
}

// The detector itself: JSON is caught, tables and outlines are not.
TEST(CliText, TheDetectorTellsJsonFromText) {
  EXPECT_TRUE(LooksLikeJson("{"));
  EXPECT_TRUE(LooksLikeJson("  \"id\": \"run-1\","));
  EXPECT_TRUE(LooksLikeJson("context: {\"plan\":\"x\"}"));
  EXPECT_TRUE(LooksLikeJson("  [1, 2]"));
  EXPECT_FALSE(LooksLikeJson("ID     STATUS  TITLE"));
  EXPECT_FALSE(LooksLikeJson("lease: owner=coder epoch=1"));
}

// What agents wrote reaches the human's terminal: no escape sequences.
TEST(CliText, ControlCharactersNeverReachTheTerminal) {
  EXPECT_EQ(Printable("ok\rFAKE\x1b]52;c;x\x07 \x1b[2J\xc2\x9b\x7f é\n\tend"),
            "ok?FAKE?]52;c;x? ?[2J?? é\n\tend");
}

TEST(CliText, TaskListShowsWhoHoldsEachTaskAndUntilWhen) {
  const Json result = {
      {"tasks",
       {{{"id", "task-1"}, {"kind", "task"}, {"status", "in_progress"}, {"priority", 0},
         {"title", "write the parser"},
         {"lease", {{"owner", "coder"}, {"epoch", 2}, {"expires_at", "2026-11-26T01:00:00Z"}}}},
        {{"id", "task-2"}, {"kind", "task"}, {"status", "ready"}, {"priority", 0},
         {"title", "review"}, {"lease", nullptr}}}}};
  const std::string text = RenderText("task.list", result);
  EXPECT_NE(text.find("HOLDER"), std::string::npos) << text;
  EXPECT_NE(text.find("coder"), std::string::npos) << text;
  EXPECT_NE(text.find("2026-11-26T01:00:00Z"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton
