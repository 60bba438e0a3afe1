#include "model/run.h"

#include "util/json_or_null.h"

namespace baton {

Json RunToJson(const Run& r) {
  return Json{{"id", r.id},
              {"project_id", OrNull(r.project_id)},
              {"profile", r.profile},
              {"machine", r.machine},
              {"status", r.status},
              {"title", r.title},
              {"cursor", OrNull(r.cursor)},
              {"cursor_index", OrNull(r.cursor_index)},
              {"context", r.context},
              {"meta", r.meta},
              {"version", r.version},
              {"created_at", r.created_at},
              {"updated_at", r.updated_at}};
}

namespace {

std::optional<std::string> OptionalString(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? std::optional(it->get<std::string>()) : std::nullopt;
}

std::optional<int64_t> OptionalInt(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? std::optional(it->get<int64_t>())
                                                   : std::nullopt;
}

std::string Text(const Json& j, const char* key) { return OptionalString(j, key).value_or(""); }

}  // namespace

Run RunFromJson(const Json& answer) {
  return Run{.id = Text(answer, "id"),
             .project_id = OptionalString(answer, "project_id"),
             .profile = Text(answer, "profile"),
             .machine = Text(answer, "machine"),
             .status = Text(answer, "status"),
             .title = Text(answer, "title"),
             .cursor = OptionalString(answer, "cursor"),
             .cursor_index = OptionalInt(answer, "cursor_index"),
             .context = answer.value("context", Json::object()),
             .meta = answer.value("meta", Json::object()),
             .version = OptionalInt(answer, "version").value_or(0),
             .created_at = Text(answer, "created_at"),
             .updated_at = Text(answer, "updated_at")};
}

}  // namespace baton
