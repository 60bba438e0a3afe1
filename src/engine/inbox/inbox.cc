#include "engine/inbox/inbox.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/stigmergy/stigmergy.h"
#include "store/tables/board_table.h"
#include "store/tables/handoff_table.h"
#include "store/tables/inbox_dismissal_table.h"
#include "store/tables/message_table.h"
#include "store/tables/mirror_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

using Scope = InboxScope;

class Collector {
 public:
  Collector(OpContext& ctx, Scope scope) : ctx_(ctx), scope_(std::move(scope)) {}

  Status CollectAll() {
    RETURN_IF_ERROR(Questions());
    RETURN_IF_ERROR(SinfoniaReturns());
    RETURN_IF_ERROR(StigmergyGates());
    RETURN_IF_ERROR(BoardCards());
    RETURN_IF_ERROR(Messages());
    RETURN_IF_ERROR(LostAgents());
    return Mirrors();
  }

  std::vector<InboxItem> items() && { return std::move(items_); }

 private:
  void Add(const std::string& id, const char* kind, const std::optional<RunLabel>& run,
           const std::string& from, std::string title, std::string body, const std::string& since,
           std::initializer_list<const char*> actions, Json ref) {
    const int64_t since_ms = ParseTime(since);
    items_.push_back({.id = id,
                      .kind = kind,
                      .run = run,
                      .from = from,
                      .title = std::move(title),
                      .body = std::move(body),
                      .since = since,
                      .waited_ms = since_ms < 0 ? 0 : std::max<int64_t>(0, ctx_.now_ms - since_ms),
                      .actions = std::vector<std::string>(actions.begin(), actions.end()),
                      .ref = std::move(ref)});
  }

  Status Questions() {
    ASSIGN_OR_RETURN(std::vector<InboxQuestion> rows, ListOpenQuestionsForInbox(ctx_.txn, scope_));
    for (const InboxQuestion& r : rows) {
      const Json& questions = r.questions;
      std::string first;
      if (questions.is_array() && !questions.empty() && questions[0].is_object()) {
        first = questions[0].value("question", "");
      }
      const std::string& message = r.message;
      const bool gate = r.work_gate;
      Json q = {{"id", r.id},
                {"run_id", r.run ? Json(r.run->id) : Json()},
                {"asked_by", r.asked_by},
                {"message", message},
                {"questions", questions},
                {"work_gate", gate},
                {"created_at", r.created_at}};
      Add("question:" + std::to_string(r.seq), "question", r.run, r.asked_by,
          (gate ? "Work gate: " : "") + (first.empty() ? message : first),
          first.empty() || message == first ? "" : message, r.created_at, {"answer", "dismiss"},
          {{"question", q}});
    }
    return Status();
  }

  Status SinfoniaReturns() {
    ASSIGN_OR_RETURN(std::vector<ReturnedStep> rows, ListReturnedStepsForInbox(ctx_.txn, scope_));
    for (const ReturnedStep& r : rows) {
      const std::string& step = r.step;
      const std::string run_id = r.run ? r.run->id : "";
      Add("approval:handoff:" + r.id, "approval", r.run, r.source,
          "Review step " + step + ", returned by " + r.source, r.body, r.created_at,
          {"approve", "reject", "dismiss"},
          {{"run", run_id}, {"subject_kind", "handoff"}, {"subject", r.id}, {"step", step}});
    }
    return Status();
  }

  Status StigmergyGates() {
    ASSIGN_OR_RETURN(std::vector<ExecutionReadyRun> runs,
                     ListRunsReadyForExecutionForInbox(ctx_.txn, scope_));
    for (const ExecutionReadyRun& r : runs) {
      if (r.meta.value("autonomy_mode", "supervised") != "supervised") continue;
      ASSIGN_OR_RETURN(std::string closed, StigmergyExecutionGateClosed(ctx_.txn, r.id));
      if (closed.empty()) continue;
      Add("approval:execution:" + r.id + ":" + std::to_string(r.version), "approval",
          RunLabel{.id = r.id, .title = r.title, .profile = r.profile}, "saul",
          "Approve execution of " + r.title,
          "The project is ready for execution and supervised: " + closed, r.updated_at,
          {"approve", "reject", "dismiss"},
          {{"run", r.id}, {"subject_kind", "run"}, {"subject", "execution"}});
    }
    ASSIGN_OR_RETURN(std::vector<InboxTask> stories,
                     ListStoriesAwaitingVerificationForInbox(ctx_.txn, scope_));
    for (const InboxTask& r : stories) {
      // "id" is the story's key; its run is joined, so always there.
      const std::string run_id = r.run ? r.run->id : "";
      Add("approval:story:" + run_id + ":" + r.id + ":" + std::to_string(r.version), "approval",
          r.run, r.assignee.value_or(""), "Verify story " + r.id + ": " + r.title, "", r.updated_at,
          {"approve", "reject", "dismiss"},
          {{"run", run_id}, {"subject_kind", "story"}, {"subject", r.id}});
    }
    return Status();
  }

  Status BoardCards() {
    ASSIGN_OR_RETURN(std::vector<InboxBoard> boards,
                     ListBoardsForInbox(ctx_.txn, scope_.project_id));
    for (const InboxBoard& b : boards) {
      for (const Json& col : b.columns) {
        if (!col.is_object() || col.value("gate", "") != "human") continue;
        RETURN_IF_ERROR(CardsIn(b.id, b.name, b.columns, col));
      }
    }
    return Status();
  }

  Status CardsIn(const std::string& board_id, const std::string& board_name, const Json& columns,
                 const Json& col) {
    Json next = Json::array();
    const Json transitions = col.value("transitions", Json::array());
    for (const Json& other : columns) {
      if (!other.is_object() || other["id"] == col["id"]) continue;
      const bool allowed =
          transitions.empty() ||
          std::find(transitions.begin(), transitions.end(), other["name"]) != transitions.end() ||
          std::find(transitions.begin(), transitions.end(), other["id"]) != transitions.end();
      if (allowed) next.push_back(other["name"]);
    }
    ASSIGN_OR_RETURN(
        std::vector<InboxTask> rows,
        ListBoardColumnCardsForInbox(ctx_.txn, board_id, col.value("id", ""), scope_.run_id));
    const std::string label = col.value("label", col.value("name", ""));
    for (const InboxTask& r : rows) {
      Add("board_card:" + r.id + ":" + std::to_string(r.version), "board_card", r.run,
          r.assignee.value_or(""), r.title,
          "Waiting in \"" + label + "\" on board " + board_name + ": a human moves it on",
          r.updated_at, {"move", "dismiss"},
          {{"task", r.id},
           {"board", board_id},
           {"column", col.value("name", "")},
           {"next_columns", next}});
    }
    return Status();
  }

  Status Messages() {
    ASSIGN_OR_RETURN(std::vector<UndeliveredMessage> rows,
                     ListUndeliveredMessagesForInbox(ctx_.txn, scope_.project_id, scope_.run_id));
    for (const UndeliveredMessage& r : rows) {
      const std::string& status = r.delivery_status;
      const std::string attempts = std::to_string(r.delivery_attempts);
      Add("message:" + r.id + ":" + status + ":" + attempts, "message", r.run, r.sender,
          "Message to " + r.recipient + " " +
              (status == "escalated" ? "escalated" : "not delivered") + " after " + attempts +
              " attempt(s)" + (r.last_error ? ": " + *r.last_error : ""),
          r.body, r.created_at, {"dismiss"},
          {{"message",
            {{"id", r.id},
             {"from", r.sender},
             {"to", r.recipient},
             {"delivery_status", status},
             {"delivery_attempts", r.delivery_attempts},
             {"last_error", OrNull(r.last_error)}}}});
    }
    return Status();
  }

  // Agents marked lost, or silent past their lease, that still hold tasks:
  // the work stands still until someone frees it (agent.reconcile) or the
  // agent comes back.
  Status LostAgents() {
    ASSIGN_OR_RETURN(
        std::vector<HeldTask> rows,
        ListTasksOfLostAgentsForInbox(ctx_.txn, ctx_.now_ms, scope_.project_id, scope_.run_id));
    for (size_t i = 0; i < rows.size();) {
      const HeldTask& first = rows[i];
      const std::string agent = first.lease_owner;
      Json tasks = Json::array();
      std::string titles;
      size_t j = i;
      for (; j < rows.size() && rows[j].lease_owner == agent; ++j) {
        tasks.push_back(rows[j].id);
        titles += (titles.empty() ? "" : ", ") + rows[j].title;
      }
      const bool lost = first.agent_status == "lost";
      const int64_t expired = first.lease_expires_at.value_or(ctx_.now_ms);
      Add("lost_agent:" + agent + ":" + std::to_string(expired) + ":" +
              std::to_string(tasks.size()),
          "lost_agent", first.run, agent,
          "Agent " + agent + (lost ? " is lost" : " went silent (its lease ran out)") +
              " and still holds " + std::to_string(tasks.size()) + " task(s)",
          titles, FormatTime(expired), {"dismiss"}, {{"agent", agent}, {"tasks", tasks}});
      i = j;
    }
    return Status();
  }

  Status Mirrors() {
    ASSIGN_OR_RETURN(std::vector<FailedMirrorItem> rows,
                     ListFailedMirrorsForInbox(ctx_.txn, scope_));
    for (const FailedMirrorItem& m : rows) {
      Add("mirror:" + m.path + ":" + m.failed_at, "mirror", m.run, "baton",
          "Mirror " + m.path + " (" + m.format + ") failed", m.last_error, m.failed_at, {"dismiss"},
          {{"path", m.path}, {"format", m.format}, {"last_error", m.last_error}});
    }
    return Status();
  }

  OpContext& ctx_;
  Scope scope_;
  std::vector<InboxItem> items_;
};

// Every item now, dismissed ones left out, oldest first.
Result<std::vector<InboxItem>> CurrentItems(OpContext& ctx, const Scope& scope) {
  Collector c(ctx, scope);
  RETURN_IF_ERROR(c.CollectAll());
  std::vector<InboxItem> all = std::move(c).items();
  ASSIGN_OR_RETURN(std::vector<std::string> dismissed, ListDismissedInboxItems(ctx.txn));
  const std::set<std::string> hidden(dismissed.begin(), dismissed.end());
  std::vector<InboxItem> items;
  for (InboxItem& item : all) {
    if (hidden.count(item.id) == 0) items.push_back(std::move(item));
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const InboxItem& a, const InboxItem& b) { return a.since < b.since; });
  return items;
}

}  // namespace

Json InboxItemToJson(const InboxItem& item) {
  return Json{{"id", item.id},
              {"kind", item.kind},
              {"run_id", item.run ? Json(item.run->id) : Json()},
              {"run_title", item.run ? Json(item.run->title) : Json()},
              {"profile", item.run ? Json(item.run->profile) : Json()},
              {"from", item.from},
              {"title", item.title},
              {"body", item.body},
              {"since", item.since},
              {"waited_ms", item.waited_ms},
              {"actions", item.actions},
              {"ref", item.ref}};
}

InboxItem InboxItemFromJson(const Json& j) {
  InboxItem item{.id = j.at("id").get<std::string>(),
                 .kind = j.at("kind").get<std::string>(),
                 .from = j.at("from").get<std::string>(),
                 .title = j.at("title").get<std::string>(),
                 .body = j.at("body").get<std::string>(),
                 .since = j.at("since").get<std::string>(),
                 .waited_ms = j.at("waited_ms").get<int64_t>(),
                 .actions = j.at("actions").get<std::vector<std::string>>(),
                 .ref = j.at("ref")};
  if (j.at("run_id").is_string()) {
    item.run = RunLabel{.id = j["run_id"].get<std::string>(),
                        .title = j.at("run_title").get<std::string>(),
                        .profile = j.at("profile").get<std::string>()};
  }
  return item;
}

Result<Json> ListInbox(OpContext& ctx, const Json& in) {
  Scope scope;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(scope.project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  scope.run_id = in.value("run", "");
  ASSIGN_OR_RETURN(std::vector<InboxItem> items, CurrentItems(ctx, scope));
  Json by_kind = Json::object();
  Json list = Json::array();
  for (const InboxItem& item : items) {
    by_kind[item.kind] = by_kind.value(item.kind, 0) + 1;
    list.push_back(InboxItemToJson(item));
  }
  return Json{{"count", items.size()}, {"by_kind", by_kind}, {"items", list}};
}

Result<Json> DismissInboxItem(OpContext& ctx, const Json& in) {
  const std::string id = in.at("item").get<std::string>();
  ASSIGN_OR_RETURN(std::vector<InboxItem> items, CurrentItems(ctx, Scope{}));
  const auto it = std::find_if(items.begin(), items.end(),
                               [&](const InboxItem& item) { return item.id == id; });
  if (it == items.end()) {
    return NotFoundError("item: nothing needs you under id \"" + id +
                         "\" (already dealt with, dismissed, or changed since: list the inbox "
                         "again)");
  }
  const InboxItem& item = *it;
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(InsertInboxDismissal(ctx.txn, {.item = id,
                                                 .kind = item.kind,
                                                 .note = note,
                                                 .dismissed_by = ctx.actor.id,
                                                 .dismissed_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = item.run ? item.run->id : std::string(),
                                    .kind = "inbox.dismissed",
                                    .summary = "dismissed: " + item.title +
                                               (note.empty() ? "" : " (" + note + ")"),
                                    .payload = {{"item", id}, {"kind", item.kind}, {"note", note}}})
                      .status());
  return Json{{"item", id}, {"dismissed", true}};
}

Result<Json> RecordNotification(OpContext& ctx, const Json& in) {
  const bool sent = in.at("outcome") == "sent";
  const int64_t attempts = in.at("attempts").get<int64_t>();
  const std::string title = in.value("title", "");
  ASSIGN_OR_RETURN(int64_t seq,
                   AppendEvent(ctx, {.run_id = in.value("run", ""),
                                     .kind = "inbox.notified",
                                     .summary = sent ? "notified: " + title
                                                     : "notify command failed after " +
                                                           std::to_string(attempts) +
                                                           " attempt(s): " + in.value("error", ""),
                                     .payload = {{"item", in.at("item")},
                                                 {"outcome", in.at("outcome")},
                                                 {"attempts", attempts},
                                                 {"exit_code", in.value("exit_code", -1)},
                                                 {"error", in.value("error", "")}}}));
  return Json{{"seq", seq}};
}

}  // namespace baton
