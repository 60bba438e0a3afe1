#include "ops/schemas.h"

namespace baton::schema {

Json Type(const char* type) { return Json{{"type", type}}; }

Json Nullable(const char* type) { return Json{{"type", Json::array({type, "null"})}}; }

Json Entity(std::initializer_list<std::pair<const char*, Json>> properties) {
  Json props = Json::object();
  Json required = Json::array();
  for (const auto& [name, s] : properties) {
    props[name] = s;
    required.push_back(name);
  }
  return Json{{"type", "object"}, {"properties", props}, {"required", required}};
}

Json Id(std::string description) {
  return Json{{"type", "string"},
              {"pattern", "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"},
              {"description", std::move(description)}};
}

Json String(std::string description, int max_length) {
  return Json{{"type", "string"},
              {"maxLength", max_length},
              {"description", std::move(description)}};
}

Json Path(std::string description) {
  Json p = String(std::move(description), 4096);
  p["x-baton-path"] = true;
  return p;
}

Json Integer(std::string description) {
  return Json{{"type", "integer"}, {"description", std::move(description)}};
}

Json Integer(std::string description, int64_t min, int64_t max) {
  return Json{{"type", "integer"},
              {"minimum", min},
              {"maximum", max},
              {"description", std::move(description)}};
}

Json Boolean(std::string description) {
  return Json{{"type", "boolean"}, {"description", std::move(description)}};
}

Json Object(std::string description) {
  return Json{{"type", "object"}, {"description", std::move(description)}};
}

Json Enum(std::string description, std::initializer_list<const char*> values) {
  Json list = Json::array();
  for (const char* v : values) list.push_back(v);
  return Json{{"type", "string"}, {"enum", list}, {"description", std::move(description)}};
}

Json TriggerRule() {
  return Enum(
      "what failed or cancelled dependencies do: all_success (default; the task stays "
      "blocked as upstream_failed), all_done (any ending counts), none_failed "
      "(cancelled counts as met, failed blocks)",
      {"all_success", "all_done", "none_failed"});
}

Json Input(std::initializer_list<std::pair<const char*, Json>> properties,
           std::initializer_list<const char*> required) {
  Json props = Json::object();
  for (const auto& [name, s] : properties) props[name] = s;
  Json req = Json::array();
  for (const char* r : required) req.push_back(r);
  Json out = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  if (!req.empty()) out["required"] = req;
  return out;
}

Json ProjectOut() {
  return Entity({{"id", {{"type", "string"}}},
                 {"name", {{"type", "string"}}},
                 {"repo_path", Nullable("string")},
                 {"autonomy_mode", {{"type", "string"}}},
                 {"meta", {{"type", "object"}}},
                 {"version", {{"type", "integer"}}},
                 {"created_at", {{"type", "string"}}},
                 {"updated_at", {{"type", "string"}}}});
}

Json RunOut() {
  return Entity({{"id", {{"type", "string"}}},
                 {"project_id", Nullable("string")},
                 {"profile", {{"type", "string"}}},
                 {"machine", {{"type", "string"}}},
                 {"status", {{"type", "string"}}},
                 {"title", {{"type", "string"}}},
                 {"cursor", Nullable("string")},
                 {"cursor_index", Nullable("integer")},
                 {"context", {{"type", "object"}}},
                 {"meta", {{"type", "object"}}},
                 {"version", {{"type", "integer"}}},
                 {"created_at", {{"type", "string"}}},
                 {"updated_at", {{"type", "string"}}}});
}

Json TaskOut() {
  return Entity({{"id", {{"type", "string"}}},
                 {"run_id", Nullable("string")},
                 {"project_id", Nullable("string")},
                 {"parent_id", Nullable("string")},
                 {"kind", {{"type", "string"}}},
                 {"key", Nullable("string")},
                 {"title", {{"type", "string"}}},
                 {"body", {{"type", "string"}}},
                 {"machine", {{"type", "string"}}},
                 {"status", {{"type", "string"}}},
                 {"priority", {{"type", "integer"}}},
                 {"position", {{"type", "integer"}}},
                 {"assignee", Nullable("string")},
                 {"lease", Nullable("object")},
                 {"attempts", {{"type", "integer"}}},
                 {"trigger_rule", {{"type", "string"}}},
                 {"blocked_reason", Nullable("string")},
                 {"board_id", Nullable("string")},
                 {"board_column", Nullable("string")},
                 {"version", {{"type", "integer"}}},
                 {"created_at", {{"type", "string"}}},
                 {"updated_at", {{"type", "string"}}}});
}

Json AgentOut() {
  return Entity({{"id", {{"type", "string"}}},
                 {"role", {{"type", "string"}}},
                 {"kind", {{"type", "string"}}},
                 {"provider", Nullable("string")},
                 {"model", Nullable("string")},
                 {"team", Nullable("string")},
                 {"project_id", Nullable("string")},
                 {"machine", {{"type", "string"}}},
                 {"status", {{"type", "string"}}},
                 {"session_ids", {{"type", "array"}}},
                 {"auto_resume", {{"type", "boolean"}}},
                 {"delivery_command", Nullable("string")},
                 {"last_heartbeat_at", Nullable("string")},
                 {"version", {{"type", "integer"}}}});
}

Json EventOut() {
  return Entity({{"seq", {{"type", "integer"}}},
                 {"time", {{"type", "string"}}},
                 {"run_id", Nullable("string")},
                 {"actor", {{"type", "object"}}},
                 {"kind", {{"type", "string"}}},
                 {"summary", {{"type", "string"}}},
                 {"payload", Json::object()},
                 {"prev_hash", {{"type", "string"}}},
                 {"hash", {{"type", "string"}}}});
}

Json ListOf(const char* key, Json item) {
  return Json{{"type", "object"},
              {"properties", {{key, {{"type", "array"}, {"items", std::move(item)}}}}},
              {"required", Json::array({key})}};
}

Json AnyObject() { return Json{{"type", "object"}}; }

}  // namespace baton::schema
