#include "mcp/resources.h"

namespace baton::mcp {
namespace {

constexpr char kScheme[] = "baton://";

// A parsed resource URI: what to call and with what.
struct Target {
  std::string op;
  Json input;
};

Result<Target> Resolve(const std::string& uri) {
  const std::string scheme = kScheme;
  auto bad = [&] {
    return InvalidArgumentError("uri: \"" + uri +
                                "\" is not a baton resource (baton://runs, baton://runs/{id}[/"
                                "tasks|/ledger|/questions], baton://tasks/{id}, "
                                "baton://questions)");
  };
  if (uri.rfind(scheme, 0) != 0) return bad();
  std::vector<std::string> parts;
  size_t start = scheme.size();
  while (start <= uri.size()) {
    size_t slash = uri.find('/', start);
    if (slash == std::string::npos) slash = uri.size();
    parts.push_back(uri.substr(start, slash - start));
    start = slash + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty()) return bad();
  }
  if (parts == std::vector<std::string>{"runs"}) return Target{"run.list", {{"limit", 500}}};
  if (parts == std::vector<std::string>{"questions"}) return Target{"question.list", Json::object()};
  if (parts.size() == 2 && parts[0] == "tasks") return Target{"task.show", {{"id", parts[1]}}};
  if (parts.size() < 2 || parts.size() > 3 || parts[0] != "runs") return bad();
  if (parts.size() == 2) return Target{"run.show", {{"id", parts[1]}}};
  if (parts[2] == "tasks") return Target{"task.list", {{"run", parts[1]}}};
  if (parts[2] == "ledger") return Target{"ledger.events", {{"run", parts[1]}, {"limit", 1000}}};
  if (parts[2] == "questions") return Target{"question.list", {{"run", parts[1]}, {"status", "all"}}};
  return bad();
}

Json Template(const char* uri, const char* name, const char* description) {
  return Json{{"uriTemplate", uri},
              {"name", name},
              {"description", description},
              {"mimeType", "application/json"}};
}

Json Resource(std::string uri, std::string name, std::string description) {
  return Json{{"uri", std::move(uri)},
              {"name", std::move(name)},
              {"description", std::move(description)},
              {"mimeType", "application/json"}};
}

}  // namespace

Json ResourceTemplates() {
  return Json{{"resourceTemplates",
               {Template("baton://runs/{id}", "run", "a run: status, cursor, context, meta"),
                Template("baton://runs/{id}/tasks", "run-tasks", "a run's tasks"),
                Template("baton://runs/{id}/ledger", "run-ledger", "a run's ledger events"),
                Template("baton://runs/{id}/questions", "run-questions", "a run's questions"),
                Template("baton://tasks/{id}", "task", "a task with its lease")}}};
}

Result<Json> ListResources(Api& api, const Actor& actor) {
  Json list = Json::array({Resource("baton://runs", "runs", "every run"),
                           Resource("baton://questions", "questions",
                                    "the questions waiting for a human")});
  // The newest runs not yet in a final state of their machine.
  constexpr size_t kMaxRuns = 200;
  ASSIGN_OR_RETURN(Json all, api.Call("run.list", {{"limit", 100000}}, actor));
  std::vector<Json> runs;
  for (const Json& run : all["runs"]) {
    const Machine* machine = api.machines().Find(run["machine"].get<std::string>());
    if (machine == nullptr || !machine->IsTerminal(run["status"].get<std::string>())) runs.push_back(run);
  }
  if (runs.size() > kMaxRuns) runs.erase(runs.begin(), runs.end() - kMaxRuns);
  for (const Json& run : runs) {
    const std::string id = run["id"].get<std::string>();
    list.push_back(Resource("baton://runs/" + id, "run " + id,
                            run["profile"].get<std::string>() + " run \"" +
                                run["title"].get<std::string>() + "\", " +
                                run["status"].get<std::string>()));
  }
  return Json{{"resources", list}};
}

Status CheckResourceUri(const std::string& uri) { return Resolve(uri).status(); }

Result<Json> ReadResource(Api& api, const Actor& actor, const std::string& uri) {
  Result<Target> target = Resolve(uri);
  if (!target.ok()) return NotFoundError(target.status().message());
  ASSIGN_OR_RETURN(Json value, api.Call(target->op, target->input, actor));
  return Json{{"contents",
               {{{"uri", uri}, {"mimeType", "application/json"}, {"text", DumpJson(value)}}}}};
}

std::vector<std::string> UrisChangedBy(const Json& event) {
  std::vector<std::string> uris;
  const std::string kind = event.value("kind", "");
  if (event["run_id"].is_string()) {
    const std::string run = "baton://runs/" + event["run_id"].get<std::string>();
    uris.push_back(run + "/ledger");
    if (kind.rfind("task.", 0) == 0 || kind.rfind("wish.", 0) == 0 || kind.rfind("board.", 0) == 0) {
      uris.push_back(run + "/tasks");
    } else {
      // Most events of a run change the run row (status, cursor, meta).
      uris.push_back(run);
      uris.push_back(run + "/tasks");
    }
    if (kind.rfind("question.", 0) == 0) uris.push_back(run + "/questions");
    if (kind.rfind("run.", 0) == 0) uris.push_back("baton://runs");
  }
  if (kind.rfind("question.", 0) == 0) uris.push_back("baton://questions");
  const Json& payload = event["payload"];
  if (payload.is_object() && payload.contains("task_id") && payload["task_id"].is_string()) {
    uris.push_back("baton://tasks/" + payload["task_id"].get<std::string>());
  }
  return uris;
}

}  // namespace baton::mcp
