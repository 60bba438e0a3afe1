// sgai's .sgai/state.json read into a run image: the current shape
// (sgai-RICH's Workflow) and the legacy one (sgai-SNAP and its TypeScript
// plugin). The layout is described in sgai_format.h; the writer is in
// sgai_document.cc.

#include "formats/sgai_format.h"

#include <set>
#include <span>

#include "formats/reader.h"

namespace baton {
namespace {

constexpr const char* kRunStatuses[] = {"working", "agent-done", "complete", "waiting-for-human"};
constexpr const char* kTodoStatuses[] = {"pending", "in_progress", "completed", "cancelled"};
constexpr const char* kTokenKeys[] = {"input", "output", "reasoning", "cacheRead", "cacheWrite"};
constexpr const char* kMetaStrings[] = {"task",      "goalChecksum",    "currentAgent",
                                        "sessionId", "interactionMode", "currentModel",
                                        "summary"};

bool OneOf(const std::string& s, std::span<const char* const> list) {
  for (const char* item : list) {
    if (s == item) return true;
  }
  return false;
}

std::string Join(std::span<const char* const> list) {
  std::string out;
  for (const char* item : list) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

bool IsInt64(const Json& v) {
  return v.is_number_integer() &&
         (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{INT64_MAX});
}

// sgai.todo's rank of an opencode priority (as sgai.todo_write stores it).
int64_t PriorityRank(const std::string& p) {
  if (p == "high") return 2;
  if (p == "medium") return 1;
  return 0;
}

Json OptJson(const std::optional<std::string>& v) { return v ? Json(*v) : Json(); }

// What one read gathers, list by list.
struct Reading {
  std::string source;
  Json meta = Json::object();
  Json kept = Json::object();
  std::set<std::string> file_keys;
  Json tasks = Json::array();
  Json messages = Json::array();
  Json history = Json::array();
  Json usage = Json::array();
  Json questions = Json::array();
};

Result<std::string> ReadStatus(ObjectReader& top) {
  ASSIGN_OR_RETURN(std::optional<std::string> status, top.OptString("status"));
  // A fresh workflow's status. sgai's Go struct has no omitempty on status,
  // so a state written right after a hand-off says "" (issue 18).
  if (!status || status->empty()) return std::string("working");
  if (*status == "human-communication") return std::string("waiting-for-human");  // sgai-SNAP
  if (!OneOf(*status, kRunStatuses)) {
    return top.Error("status", "unknown status \"" + *status + "\" (sgai.run allows " +
                                   Join(kRunStatuses) + ")");
  }
  return *status;
}

Status ReadAgentSequence(ObjectReader& top, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> seq, top.OptArray("agentSequence"));
  if (!seq) return Status();
  for (size_t i = 0; i < seq->size(); ++i) {
    // Entries stay as they are in run.meta; only their types are checked, so
    // that the sgai operations can rely on them.
    ASSIGN_OR_RETURN(ObjectReader e,
                     ObjectReader::Make((*seq)[i], r.source, PointerAppend("/agentSequence", i)));
    RETURN_IF_ERROR(e.OptString("agent").status());
    RETURN_IF_ERROR(e.OptString("startTime").status());
    RETURN_IF_ERROR(e.OptBool("isCurrent").status());
  }
  r.meta["agentSequence"] = *seq;
  r.file_keys.insert("agentSequence");
  return Status();
}

Status ReadMeta(ObjectReader& top, Reading& r) {
  for (const char* key : kMetaStrings) {
    ASSIGN_OR_RETURN(std::optional<std::string> v, top.OptString(key));
    if (!v) continue;
    r.meta[key] = *v;
    r.file_keys.insert(key);
  }
  ASSIGN_OR_RETURN(std::optional<bool> manual, top.OptBool("summaryManual"));
  if (manual) {
    r.meta["summaryManual"] = *manual;
    r.file_keys.insert("summaryManual");
  }
  ASSIGN_OR_RETURN(std::optional<Json> visits, top.OptObject("visitCounts"));
  if (visits) {
    for (auto it = visits->begin(); it != visits->end(); ++it) {
      if (!IsInt64(it.value())) {
        return FieldError(r.source, PointerAppend("/visitCounts", it.key()),
                          "must be an integer, not " + TypeName(it.value()));
      }
    }
    r.meta["visitCounts"] = *visits;
    r.file_keys.insert("visitCounts");
  }
  ASSIGN_OR_RETURN(std::optional<Json> models, top.OptObject("modelStatuses"));
  if (models) {
    for (auto it = models->begin(); it != models->end(); ++it) {
      if (!it.value().is_string()) {
        return FieldError(r.source, PointerAppend("/modelStatuses", it.key()),
                          "must be a string, not " + TypeName(it.value()));
      }
    }
    r.meta["modelStatuses"] = *models;
    r.file_keys.insert("modelStatuses");
  }
  return ReadAgentSequence(top, r);
}

Status ReadProgress(ObjectReader& top, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> list, top.OptArray("progress"));
  if (!list) return Status();
  r.file_keys.insert("progress");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    std::optional<std::string> time, agent, description;
    if (item.is_string()) {
      description = item.get<std::string>();  // the oldest plugin logged plain notes
    } else {
      ASSIGN_OR_RETURN(ObjectReader e,
                       ObjectReader::Make(item, r.source, PointerAppend("/progress", i)));
      ASSIGN_OR_RETURN(time, e.OptString("timestamp"));
      ASSIGN_OR_RETURN(agent, e.OptString("agent"));
      ASSIGN_OR_RETURN(description, e.OptString("description"));
      e.KeepRest(r.kept);
    }
    r.history.push_back(
        {{"kind", "run.progress"},
         {"time", OptJson(time)},
         {"agent", agent.value_or("")},
         {"summary", description.value_or("")},
         {"payload", {{"agent", agent.value_or("")}, {"description", description.value_or("")}}},
         {"files", Json::array()}});
  }
  return Status();
}

// "messages" and the legacy "messageHistory" (read messages) make one list.
Status ReadMessages(ObjectReader& top, const char* key, bool history, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> list, top.OptArray(key));
  if (!list) return Status();
  r.file_keys.insert("messages");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string pointer = PointerAppend(std::string("/") + key, i);
    ASSIGN_OR_RETURN(ObjectReader m, ObjectReader::Make((*list)[i], r.source, pointer));
    ASSIGN_OR_RETURN(std::optional<int64_t> id, m.OptInt("id"));
    ASSIGN_OR_RETURN(std::optional<std::string> from, m.OptString("fromAgent"));
    ASSIGN_OR_RETURN(std::optional<std::string> to, m.OptString("toAgent"));
    ASSIGN_OR_RETURN(std::optional<std::string> body, m.OptString("body"));
    ASSIGN_OR_RETURN(std::optional<bool> read, m.OptBool("read"));
    ASSIGN_OR_RETURN(std::optional<std::string> read_at, m.OptString("readAt"));
    ASSIGN_OR_RETURN(std::optional<std::string> read_by, m.OptString("readBy"));
    ASSIGN_OR_RETURN(std::optional<std::string> created_at, m.OptString("createdAt"));
    // Unknown keys are kept where the writer puts the message.
    Json kept = Json::object();
    m.KeepRest(kept);
    const std::string target = PointerAppend("/messages", r.messages.size());
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      r.kept[target + it.key().substr(pointer.size())] = it.value();
    }
    Json meta = Json::object();
    if (id) meta["sgai_id"] = *id;
    r.messages.push_back({{"from", from.value_or("")},
                          {"to", to.value_or("")},
                          {"body", body.value_or("")},
                          {"read", read.value_or(history)},
                          {"read_at", OptJson(read_at)},
                          {"read_by", OptJson(read_by)},
                          {"created_at", OptJson(created_at)},
                          {"meta", meta}});
  }
  return Status();
}

Result<Json> ReadChoiceQuestions(ObjectReader& mc) {
  ASSIGN_OR_RETURN(std::optional<Json> questions, mc.OptArray("questions"));
  if (!questions) return Json::array();
  for (size_t i = 0; i < questions->size(); ++i) {
    ASSIGN_OR_RETURN(ObjectReader q,
                     ObjectReader::Make((*questions)[i], mc.source(),
                                        PointerAppend("/multiChoiceQuestion/questions", i)));
    RETURN_IF_ERROR(q.OptString("question").status());
    RETURN_IF_ERROR(q.OptBool("multiSelect").status());
    ASSIGN_OR_RETURN(std::optional<Json> choices, q.OptArray("choices"));
    for (size_t c = 0; choices && c < choices->size(); ++c) {
      if (!(*choices)[c].is_string()) {
        return FieldError(mc.source(), PointerAppend(q.Path("choices"), c),
                          "must be a string, not " + TypeName((*choices)[c]));
      }
    }
  }
  return *questions;
}

// humanMessage (or the legacy "message") and multiChoiceQuestion: the
// question the workflow waits on, if any.
Status ReadQuestion(ObjectReader& top, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<std::string> human, top.OptString("humanMessage"));
  ASSIGN_OR_RETURN(std::optional<std::string> legacy, top.OptString("message"));
  std::string message = human.value_or("");
  if (human) r.file_keys.insert("humanMessage");
  if (legacy && message.empty()) {
    message = *legacy;
    r.file_keys.insert("humanMessage");
  } else if (legacy) {
    r.kept["/message"] = *legacy;  // beside a humanMessage it has no place of its own
  }
  Json questions = Json::array();
  bool work_gate = false;
  ASSIGN_OR_RETURN(std::optional<Json> mc, top.OptObject("multiChoiceQuestion"));
  if (mc) {
    ASSIGN_OR_RETURN(ObjectReader q, ObjectReader::Make(*mc, r.source, "/multiChoiceQuestion"));
    ASSIGN_OR_RETURN(questions, ReadChoiceQuestions(q));
    ASSIGN_OR_RETURN(std::optional<bool> gate, q.OptBool("isWorkGate"));
    work_gate = gate.value_or(false);
    q.KeepRest(r.kept);
  }
  if (message.empty() && questions.empty()) return Status();
  r.questions.push_back({{"id", Json()},
                         {"message", message},
                         {"questions", questions},
                         {"work_gate", work_gate},
                         {"status", "open"},
                         {"asked_by", "coordinator"},  // only the coordinator asks in sgai
                         {"created_at", Json()}});
  return Status();
}

Status ReadTodos(ObjectReader& top, const char* key, bool project, const std::string& agent,
                 Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> list, top.OptArray(key));
  if (!list) return Status();
  r.file_keys.insert(key);
  std::set<std::string> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(ObjectReader t, ObjectReader::Make((*list)[i], r.source,
                                                        PointerAppend(std::string("/") + key, i)));
    ASSIGN_OR_RETURN(std::string id, t.String("id"));
    ASSIGN_OR_RETURN(std::optional<std::string> content, t.OptString("content"));
    ASSIGN_OR_RETURN(std::optional<std::string> status, t.OptString("status"));
    ASSIGN_OR_RETURN(std::optional<std::string> priority, t.OptString("priority"));
    if (!ids.insert(id).second) {
      return t.Error("id", "\"" + id + "\" appears twice in " + key);
    }
    if (status && !OneOf(*status, kTodoStatuses)) {
      return t.Error("status", "unknown status \"" + *status + "\" (sgai.todo allows " +
                                   Join(kTodoStatuses) + ")");
    }
    t.KeepRest(r.kept);
    const std::string task_key = project ? "project_todo:" + id : "todo:" + agent + ":" + id;
    const char* kind = project ? "project_todo" : "todo";
    Json meta = {{"todo_id", id}};
    if (priority) meta["priority"] = *priority;
    r.tasks.push_back({{"ref", std::string(kind) + ":" + task_key},
                       {"key", task_key},
                       {"kind", kind},
                       {"parent", Json()},
                       {"depends_on", Json::array()},
                       {"title", content.value_or("")},
                       {"body", ""},
                       {"status", status.value_or("pending")},
                       {"priority", PriorityRank(priority.value_or("medium"))},
                       {"position", static_cast<int64_t>(i)},
                       {"assignee", project ? Json() : Json(agent)},
                       {"attempts", 0},
                       {"board_column", Json()},
                       {"result", Json()},
                       {"meta", meta},
                       {"created_at", Json()},
                       {"updated_at", Json()}});
  }
  return Status();
}

Result<Json> ReadTokens(const Json& value, const std::string& source, const std::string& pointer,
                        Json& kept) {
  ASSIGN_OR_RETURN(ObjectReader t, ObjectReader::Make(value, source, pointer));
  Json tokens = Json::object();
  for (const char* key : kTokenKeys) {
    ASSIGN_OR_RETURN(std::optional<int64_t> n, t.OptInt(key));
    tokens[key] = n.value_or(0);
  }
  t.KeepRest(kept);
  return tokens;
}

Json ZeroTokens() {
  Json tokens = Json::object();
  for (const char* key : kTokenKeys) tokens[key] = 0;
  return tokens;
}

Status ReadSteps(ObjectReader& a, const std::string& agent, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> steps, a.OptArray("steps"));
  for (size_t j = 0; steps && j < steps->size(); ++j) {
    const std::string pointer = PointerAppend(a.Path("steps"), j);
    ASSIGN_OR_RETURN(ObjectReader s, ObjectReader::Make((*steps)[j], r.source, pointer));
    ASSIGN_OR_RETURN(std::optional<std::string> step_id, s.OptString("stepId"));
    RETURN_IF_ERROR(s.OptString("agent").status());  // the entry's agent is the step's
    ASSIGN_OR_RETURN(std::optional<std::string> model, s.OptString("model"));
    ASSIGN_OR_RETURN(std::optional<std::string> session, s.OptString("sessionId"));
    ASSIGN_OR_RETURN(std::optional<double> cost, s.OptNumber("cost"));
    ASSIGN_OR_RETURN(std::optional<Json> tokens_in, s.OptObject("tokens"));
    ASSIGN_OR_RETURN(std::optional<std::string> time, s.OptString("timestamp"));
    Json tokens = ZeroTokens();
    if (tokens_in) {
      ASSIGN_OR_RETURN(tokens, ReadTokens(*tokens_in, r.source, s.Path("tokens"), r.kept));
    }
    s.KeepRest(r.kept);
    r.usage.push_back({{"agent", agent},
                       {"model", OptJson(model)},
                       {"step_id", step_id.value_or("")},
                       {"session_id", session.value_or("")},
                       {"cost", cost.value_or(0.0)},
                       {"tokens", tokens},
                       {"time", OptJson(time)}});
  }
  return Status();
}

// cost.byAgent[].steps[] become usage rows; every total is their sum, which
// the writer adds up again.
Status ReadCost(ObjectReader& top, Reading& r) {
  ASSIGN_OR_RETURN(std::optional<Json> cost, top.OptObject("cost"));
  if (!cost) return Status();
  r.file_keys.insert("cost");
  ASSIGN_OR_RETURN(ObjectReader c, ObjectReader::Make(*cost, r.source, "/cost"));
  RETURN_IF_ERROR(c.OptNumber("totalCost").status());
  ASSIGN_OR_RETURN(std::optional<Json> totals, c.OptObject("totalTokens"));
  if (totals) {
    RETURN_IF_ERROR(ReadTokens(*totals, r.source, c.Path("totalTokens"), r.kept).status());
  }
  ASSIGN_OR_RETURN(std::optional<Json> by_agent, c.OptArray("byAgent"));
  c.KeepRest(r.kept);
  for (size_t i = 0; by_agent && i < by_agent->size(); ++i) {
    ASSIGN_OR_RETURN(ObjectReader a, ObjectReader::Make((*by_agent)[i], r.source,
                                                        PointerAppend(c.Path("byAgent"), i)));
    ASSIGN_OR_RETURN(std::optional<std::string> agent, a.OptString("agent"));
    RETURN_IF_ERROR(a.OptNumber("cost").status());
    ASSIGN_OR_RETURN(std::optional<Json> tokens, a.OptObject("tokens"));
    if (tokens) {
      RETURN_IF_ERROR(ReadTokens(*tokens, r.source, a.Path("tokens"), r.kept).status());
    }
    RETURN_IF_ERROR(ReadSteps(a, agent.value_or(""), r));
    a.KeepRest(r.kept);
  }
  return Status();
}

Json ImageOf(Reading& r, const std::string& status) {
  Json meta = r.meta;
  if (!r.kept.empty()) meta["kept"] = {{"sgai", r.kept}};
  Json keys = Json::array();
  for (const std::string& k : r.file_keys) keys.push_back(k);
  meta["sgaiFileKeys"] = keys;
  const std::string summary = meta.value("summary", "");
  Json run = {{"profile", "sgai"},         {"machine", "sgai.run"},
              {"status", status},          {"title", summary.empty() ? "sgai workflow" : summary},
              {"cursor", Json()},          {"cursor_index", Json()},
              {"context", Json::object()}, {"meta", meta},
              {"created_at", Json()},      {"updated_at", Json()}};
  return Json{{"image", 1},
              {"source", {{"format", "sgai"}, {"name", r.source}}},
              {"run", run},
              {"tasks", std::move(r.tasks)},
              {"messages", std::move(r.messages)},
              {"history", std::move(r.history)},
              {"approvals", Json::array()},
              {"sessions", Json::array()},
              {"handoffs", Json::array()},
              {"usage", std::move(r.usage)},
              {"questions", std::move(r.questions)}};
}

}  // namespace

Result<RunImage> ReadSgaiState(std::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(Json doc, ReadJsonObject(text, source));
  ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::Make(doc, source, ""));
  Reading r{.source = source};
  ASSIGN_OR_RETURN(std::string status, ReadStatus(top));
  RETURN_IF_ERROR(ReadMeta(top, r));
  // Todos belong to the current agent; sgai reads an empty one as the
  // coordinator.
  std::string agent = r.meta.value("currentAgent", "");
  if (agent.empty()) agent = "coordinator";
  RETURN_IF_ERROR(ReadProgress(top, r));
  RETURN_IF_ERROR(ReadMessages(top, "messages", false, r));
  RETURN_IF_ERROR(ReadMessages(top, "messageHistory", true, r));
  RETURN_IF_ERROR(ReadQuestion(top, r));
  RETURN_IF_ERROR(ReadTodos(top, "todos", false, agent, r));
  RETURN_IF_ERROR(ReadTodos(top, "projectTodos", true, agent, r));
  RETURN_IF_ERROR(ReadCost(top, r));
  top.KeepRest(r.kept);  // "navigate" and whatever else sgai's versions added
  return ImageOf(r, status);
}

}  // namespace baton
