// sgai's MCP tools (cmd/sgai/mcp.go) with sgai's names, argument shapes and
// reply texts, each an adapter over registry operations. Which run they act
// on: the server's --run (or X-Baton-Run), else the newest sgai run that is
// not complete. The rules (downgraded complete, todos before agent-done,
// completion gates, waiting-for-human) are the engine's: see
// docs/profiles/sgai.md.

#include <algorithm>

#include "engine/core/questions.h"
#include "mcp/tools.h"

namespace baton::mcp {
namespace {

Json Str(const char* description) { return StringArg(description); }
Json Object(Json properties, std::vector<std::string> required) {
  return ArgsObject(std::move(properties), std::move(required));
}
Json Empty() { return ArgsObject(Json::object(), {}); }

// The run sgai's tools act on.
Result<std::string> SgaiRun(Api& api, const ToolCall& call) {
  if (!call.run.empty()) return call.run;
  ASSIGN_OR_RETURN(Json list, api.Call("run.list", {{"profile", "sgai"}}, call.actor));
  const Json* best = nullptr;
  for (const Json& run : list["runs"]) {
    if (run["status"] == "complete") continue;
    if (best == nullptr || run["updated_at"].get<std::string>() > (*best)["updated_at"].get<std::string>()) {
      best = &run;
    }
  }
  if (best == nullptr) {
    return FailedPreconditionError(
        "no sgai workflow is running; start one (baton sgai start GOAL.md) or name it with "
        "baton mcp --run RUN");
  }
  return (*best)["id"].get<std::string>();
}

// sgai lists its ask tools only while a human takes part (RICH: modes
// brainstorming and retrospective).
bool HumanInTheLoop(Api& api, const Actor& actor, const std::string& run_id) {
  ToolCall probe{actor, Json::object(), "", run_id, nullptr, nullptr};
  Result<std::string> run = SgaiRun(api, probe);
  if (!run.ok()) return true;  // the call will say what is wrong
  Result<Json> shown = api.Call("run.show", {{"id", *run}}, SystemActor());
  if (!shown.ok()) return true;
  const Json& mode = (*shown)["meta"].value("interactionMode", Json("brainstorming"));
  return !mode.is_string() || mode == "brainstorming" || mode == "retrospective";
}

Tool Make(const char* name, const char* description, Json input, bool read_only,
          std::vector<std::string> roles) {
  return SeedTool("sgai", name, description, std::move(input), read_only, std::move(roles));
}

Json TodoItems() {
  Json item = Object({{"id", Str("unique id of the todo")},
                      {"content", Str("what to do")},
                      {"status", {{"type", "string"},
                                  {"enum", {"pending", "in_progress", "completed", "cancelled"}}}},
                      {"priority", {{"type", "string"}, {"enum", {"high", "medium", "low"}}}}},
                     {"id", "content", "status", "priority"});
  return Object({{"todos", {{"type", "array"}, {"items", item}, {"description", "the whole list"}}}},
                {"todos"});
}

std::string TodoText(const Json& result) {
  const Json& todos = result.value("todos", Json::array());
  int open = 0;
  std::string lines;
  for (const Json& t : todos) {
    const std::string status = t.value("status", "pending");
    if (status != "completed") ++open;
    const char* symbol = status == "in_progress" ? "◐"
                         : status == "completed" ? "●"
                         : status == "cancelled" ? "✕"
                                                 : "○";
    lines += "→ " + std::string(symbol) + " " + t.value("content", "") + " (" +
             t.value("priority", "medium") + ")\n";
  }
  return std::to_string(open) + " todos\n" + lines;
}

std::string AnswerText(const Json& q) {
  if (q["status"] == "cancelled") return "The question was withdrawn; no answer was given.";
  std::string text;
  const Json& answer = q["answer"];
  const Json& answers = answer.value("answers", Json::array());
  for (size_t i = 0; i < answers.size(); ++i) {
    std::string chosen;
    for (const Json& c : answers[i]) chosen += (chosen.empty() ? "" : ", ") + c.get<std::string>();
    if (answers.size() > 1) text += "Question " + std::to_string(i + 1) + ": ";
    text += chosen + "\n";
  }
  const std::string free = answer.value("text", "");
  if (!free.empty()) text += free + "\n";
  return text;
}

std::string PresentedText(const Json& q) {
  std::string text;
  const Json& questions = q["questions"];
  text = "Presented " + std::to_string(questions.size()) + " question(s) to user:\n";
  for (size_t i = 0; i < questions.size(); ++i) {
    std::string choices;
    for (const Json& c : questions[i]["choices"]) choices += (choices.empty() ? "" : " ") + c.get<std::string>();
    text += "\nQuestion " + std::to_string(i + 1) + ": " + questions[i]["question"].get<std::string>() +
            "\n  Choices: [" + choices + "]\n  MultiSelect: " +
            (questions[i].value("multiSelect", false) ? "true" : "false") + "\n";
  }
  return text + "\nHuman response: " + AnswerText(q);
}

Result<Json> Ask(Api& api, ToolCall& call, Json ask) {
  ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
  ask["run"] = run;
  ASSIGN_OR_RETURN(Json q, CallOp(api, call, "question.ask", ask));
  if (q["status"] != "open") return q;
  return WaitForAnswer(api, call, q["id"].get<std::string>(), run);
}

Tool UpdateWorkflowState() {
  Json input = Object({{"status", {{"type", "string"},
                                   {"enum", {"working", "agent-done", "complete"}},
                                   {"description", "working, agent-done, or complete (coordinator)"}}},
                       {"task", Str("what you are working on now")},
                       {"addProgress", Str("a progress note to add")}},
                      {"status", "task", "addProgress"});
  Tool t = Make("update_workflow_state",
                "Update the workflow state: your status, your current task and a progress note. "
                "Only the coordinator completes the workflow.",
                input, false, {});
  // sgai offers "complete" only to the coordinator; anyone else's complete
  // is still accepted and downgraded to agent-done by the engine.
  t.input_schema_for = [input](const Actor& actor) {
    Json s = input;
    if (actor.role != "coordinator" && actor.role != "admin") {
      s["properties"]["status"]["enum"] = {"working", "agent-done"};
    }
    return s;
  };
  t.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
    const Json& a = call.arguments;
    return CallOp(api, call, "sgai.update_workflow_state",
                  {{"run", run}, {"status", a["status"]}, {"task", a["task"]},
                   {"add_progress", a["addProgress"]}});
  };
  t.text = [](const Json& r) {
    std::string text = r.value("status_preserved", false)
                           ? "Status is currently 'waiting-for-human'. Waiting for human response. "
                             "Your task and progress notes were updated but status was preserved.\n"
                           : "State updated successfully.\n";
    text += "  Status: " + r.value("status", "") + "\n";
    if (r.value("downgraded", false)) {
      text += "  Note: only the coordinator completes the workflow; your complete was recorded as agent-done.\n";
    }
    if (r.contains("reverted") && r["reverted"].is_object()) {
      text += "  Completion gate " + r["reverted"].value("gate", "") + ": " +
              r["reverted"].value("reason", "") + "\n";
    }
    if (!r.value("task", "").empty()) text += "  Current task: " + r.value("task", "") + "\n";
    return text;
  };
  return t;
}

Tool SendMessage() {
  Tool t = Make("send_message",
                "Send a message to another agent in the workflow. The message will be stored and "
                "delivered when the target agent starts.",
                Object({{"toAgent", Str("The agent who will receive this message.")},
                        {"body", Str("The content of the message to send.")}},
                       {"toAgent", "body"}),
                false, {});
  t.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
    ASSIGN_OR_RETURN(Json sent, CallOp(api, call, "mail.send",
                                       {{"to", call.arguments["toAgent"]},
                                        {"body", call.arguments["body"]},
                                        {"run", run}}));
    sent["coordinator"] = call.actor.role == "coordinator";
    return sent;
  };
  t.text = [](const Json& r) {
    const Json& m = r["messages"].empty() ? Json::object() : r["messages"][0];
    std::string text = "Message sent successfully to " + m.value("to", "") + ".\nFrom: " +
                       m.value("from", "") + "\nTo: " + m.value("to", "") + "\nBody: " +
                       m.value("body", "");
    if (!r.value("coordinator", false)) {
      text += "\n\nIMPORTANT: To receive a response from the target agent, you MUST yield control "
              "by calling update_workflow_state({status: 'agent-done'}). The target agent cannot "
              "run until you yield.";
    }
    return text;
  };
  return t;
}

Tool CheckInbox() {
  Tool t = Make("check_inbox",
                "Check for messages sent to the current agent. Returns all unread messages from "
                "other agents and marks them read.",
                Empty(), false, {});
  t.call = [](Api& api, ToolCall& call) {
    return CallOp(api, call, "mail.inbox", {{"unread_only", true}});
  };
  t.text = [](const Json& r) {
    const Json& messages = r["messages"];
    if (messages.empty()) return std::string("You have no messages.");
    std::string text = "You have " + std::to_string(messages.size()) + " message(s):\n";
    for (size_t i = 0; i < messages.size(); ++i) {
      text += "\nMessage " + std::to_string(i + 1) + ":\n  From: " + messages[i].value("from", "") +
              "\n  Body: " + messages[i].value("body", "") + "\n";
    }
    return text;
  };
  return t;
}

Tool CheckOutbox() {
  Tool t = Make("check_outbox", "Check for messages you have already sent.", Empty(), true, {});
  t.call = [](Api& api, ToolCall& call) { return CallOp(api, call, "mail.outbox", Json::object()); };
  t.text = [](const Json& r) {
    const Json& messages = r["messages"];
    if (messages.empty()) return std::string("You have not sent any messages.");
    std::string pending, delivered;
    int np = 0, nd = 0;
    for (const Json& m : messages) {
      std::string subject = m.value("body", "");
      subject = subject.substr(0, subject.find('\n'));
      if (m.value("read", false)) {
        const std::string at = m["read_at"].is_string() ? "Read at " + m["read_at"].get<std::string>() : "Unread";
        delivered += "  " + std::to_string(++nd) + ". To: " + m.value("to", "") + " | Subject: " + subject + " | " + at + "\n";
      } else {
        pending += "  " + std::to_string(++np) + ". To: " + m.value("to", "") + " | Subject: " + subject + "\n";
      }
    }
    return "Pending messages (" + std::to_string(np) + "):\n" + pending + "\nDelivered messages (" +
           std::to_string(nd) + "):\n" + delivered;
  };
  return t;
}

Tool PeekMessageBus() {
  Tool t = Make("peek_message_bus", "See every message of the workflow, read or not (coordinator).",
                Empty(), true, {"coordinator"});
  t.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
    ASSIGN_OR_RETURN(Json state, CallOp(api, call, "sgai.state", {{"run", run}}));
    return Json{{"messages", state.value("messages", Json::array())}};
  };
  t.text = [](const Json& r) {
    const Json& messages = r["messages"];
    if (messages.empty()) return std::string("No messages in the system.");
    std::string text = "Total messages: " + std::to_string(messages.size()) + "\n";
    for (size_t i = 0; i < messages.size(); ++i) {
      const Json& m = messages[i];
      text += "\nMessage " + std::to_string(i + 1) + " (ID: " + m.value("id", Json(0)).dump() +
              "):\n  From: " + m.value("fromAgent", "") + "\n  To: " + m.value("toAgent", "") +
              "\n  Status: " + (m.value("read", false) ? "read" : "pending") + "\n  Body: " +
              m.value("body", "") + "\n";
    }
    return text;
  };
  return t;
}

Tool ProjectTodoWrite() {
  Tool t = Make("project_todowrite", "Replace the project's todo list (coordinator).", TodoItems(),
                false, {"coordinator"});
  t.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
    return CallOp(api, call, "sgai.todo_write",
                  {{"run", run}, {"todos", call.arguments["todos"]}, {"project", true}});
  };
  t.text = TodoText;
  return t;
}

Tool ProjectTodoRead() {
  Tool t = Make("project_todoread", "Read the project's todo list (coordinator).", Empty(), true,
                {"coordinator"});
  t.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string run, SgaiRun(api, call));
    return CallOp(api, call, "sgai.todo_read", {{"run", run}, {"project", true}});
  };
  t.text = TodoText;
  return t;
}

Tool AskUserQuestion() {
  Json question = Object({{"question", Str("The question to ask")},
                          {"choices", {{"type", "array"},
                                       {"items", {{"type", "string"}}},
                                       {"description", "Multiple-choice options for this question"}}},
                          {"multiSelect", {{"type", "boolean"},
                                           {"description", "Allow multiple selections (default: false)"}}}},
                         {"question", "choices"});
  Tool t = Make("ask_user_question",
                "Ask the human partner one or more multiple-choice questions and wait for the "
                "answer (the call blocks until the human answers; progress is reported meanwhile).",
                Object({{"questions", {{"type", "array"},
                                       {"items", question},
                                       {"description", "Array of questions to present to the user"}}}},
                       {"questions"}),
                false, {"coordinator"});
  t.available = HumanInTheLoop;
  t.may_wait = true;
  t.call = [](Api& api, ToolCall& call) {
    return Ask(api, call, {{"questions", call.arguments["questions"]}});
  };
  t.text = PresentedText;
  return t;
}

Tool AskUserWorkGate() {
  Tool t = Make("ask_user_work_gate",
                "Ask the human partner whether the definition is complete and the build may "
                "begin; blocks until answered.",
                Object({{"summary", Str("A comprehensive summary of the definition for the human "
                                        "to review before approving.")}},
                       {"summary"}),
                false, {"coordinator"});
  t.available = HumanInTheLoop;
  t.may_wait = true;
  t.call = [](Api& api, ToolCall& call) {
    const std::string summary = call.arguments["summary"].get<std::string>();
    Json questions = Json::array({{{"question", summary + "\n\n---\n\n" + kWorkGateQuestion},
                                   {"choices", {kWorkGateApproval, kWorkGateNotYet}},
                                   {"multiSelect", false}}});
    return Ask(api, call, {{"work_gate", true}, {"questions", questions}});
  };
  t.text = PresentedText;
  return t;
}

}  // namespace

std::vector<Tool> SgaiTools(const Registry&) {
  std::vector<Tool> tools;
  tools.push_back(UpdateWorkflowState());
  tools.push_back(SendMessage());
  tools.push_back(CheckInbox());
  tools.push_back(CheckOutbox());
  tools.push_back(PeekMessageBus());
  tools.push_back(ProjectTodoWrite());
  tools.push_back(ProjectTodoRead());
  tools.push_back(AskUserQuestion());
  tools.push_back(AskUserWorkGate());
  return tools;
}

}  // namespace baton::mcp
