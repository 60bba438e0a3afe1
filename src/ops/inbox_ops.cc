// What needs the human (inbox.*) and what a run cost (run.usage): the reads
// the dashboard's home and run pages are made of, for the CLI and MCP too.

#include <cstdio>
#include <sstream>

#include "engine/core/core_services.h"
#include "engine/inbox/inbox.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

std::string Waited(int64_t ms) {
  const int64_t m = ms / 60000;
  if (m < 1) return std::to_string(ms / 1000) + "s";
  if (m < 60) return std::to_string(m) + "m";
  if (m < 48 * 60) return std::to_string(m / 60) + "h" + std::to_string(m % 60) + "m";
  return std::to_string(m / 1440) + "d";
}

std::string Cut(std::string text, size_t max) {
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (text.size() <= max) return text;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

// `baton inbox list`: one line per item, the longest waiting first.
std::string RenderInbox(const Json& out) {
  std::ostringstream text;
  if (out["items"].empty()) return "Nothing needs you.\n";
  text << out["count"].get<int64_t>() << " item(s) need you:\n";
  for (const Json& listed : out["items"]) {
    const InboxItem item = InboxItemFromJson(listed);
    char head[64];
    std::snprintf(head, sizeof head, "%-11s %6s  ", item.kind.c_str(),
                  Waited(item.waited_ms).c_str());
    text << head << Cut(item.title, 90) << "\n" << std::string(20, ' ') << "id " << item.id;
    if (item.run) text << "  run " << item.run->id;
    if (!item.from.empty()) text << "  from " << item.from;
    text << "\n";
  }
  return text.str();
}

Json InboxItemOut() {
  return s::Entity({{"id", {{"type", "string"}}},
                    {"kind", {{"type", "string"},
                              {"enum", {"question", "approval", "board_card", "message",
                                        "lost_agent", "mirror"}}}},
                    {"run_id", s::Nullable("string")},
                    {"run_title", s::Nullable("string")},
                    {"profile", s::Nullable("string")},
                    {"from", {{"type", "string"}}},
                    {"title", {{"type", "string"}}},
                    {"body", {{"type", "string"}}},
                    {"since", {{"type", "string"}}},
                    {"waited_ms", {{"type", "integer"}}},
                    {"actions", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                    {"ref", {{"type", "object"}}}});
}

Json UsageRowOut() {
  return s::Entity({{"steps", {{"type", "integer"}}},
                    {"cost", {{"type", "number"}}},
                    {"input_tokens", {{"type", "integer"}}},
                    {"output_tokens", {{"type", "integer"}}},
                    {"reasoning_tokens", {{"type", "integer"}}},
                    {"cache_read_tokens", {{"type", "integer"}}},
                    {"cache_write_tokens", {{"type", "integer"}}}});
}

}  // namespace

Status RegisterInboxOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "inbox.list",
      .summary = "What needs the human now: open questions, approvals waiting, cards at a human "
                 "gate, undeliverable messages, lost agents holding tasks, failed mirrors",
      .input_schema = s::Input({{"project", s::Id("only this project's (id or name)")},
                                {"run", s::Id("only this run's")}}),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"count", {{"type", "integer"}}},
                          {"by_kind", {{"type", "object"}}},
                          {"items", {{"type", "array"}, {"items", InboxItemOut()}}}}},
                        {"required", {"count", "by_kind", "items"}}},
      // It shows every agent's undeliverable mail: the human's and the
      // coordinator's view, not another agent's.
      .roles = {"human", "coordinator"},
      .handler = ListInbox,
      .render_text = RenderInbox,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "inbox.dismiss",
      .summary = "Hide an item of the human's inbox until it changes (the thing itself is left "
                 "as it is)",
      .input_schema = s::Input({{"item", s::String("the item's id (inbox.list)", 1000)},
                                {"note", s::String("why, for the ledger", 2000)}},
                               {"item"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"item", {{"type", "string"}}},
                                        {"dismissed", {{"type", "boolean"}}}}},
                        {"required", {"item", "dismissed"}}},
      .roles = {"human"},
      .mutating = true,
      .positional = {"item"},
      .handler = DismissInboxItem,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "inbox.notified",
      .summary = "Record what the notify command did for an inbox item (baton serve "
                 "--notify-command calls it)",
      .input_schema = s::Input({{"item", s::String("the item's id", 1000)},
                                {"run", s::Id("the item's run")},
                                {"title", s::String("the item's title", 10000)},
                                {"outcome", s::Enum("sent or failed", {"sent", "failed"})},
                                {"attempts", s::Integer("attempts made", 0, 100)},
                                {"exit_code", s::Integer("the last attempt's exit code", -1, 1000)},
                                {"error", s::String("the last failure", 10000)}},
                               {"item", "outcome", "attempts"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"seq", {{"type", "integer"}}}}},
                        {"required", {"seq"}}},
      .roles = {"admin"},
      .mutating = true,
      .handler = RecordNotification,
  }));
  Json usage_row = UsageRowOut();
  usage_row["properties"]["agent"] = {{"type", "string"}};
  usage_row["properties"]["model"] = {{"type", "string"}};
  return r.Add({
      .name = "run.usage",
      .summary = "What a run cost: steps, cost and tokens per agent and model, and in total",
      .input_schema = s::Input({{"run", s::Id("run id")}}, {"run"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"rows", {{"type", "array"}, {"items", usage_row}}},
                                        {"total", UsageRowOut()}}},
                        {"required", {"rows", "total"}}},
      .positional = {"run"},
      .handler = RunUsage,
  });
}

}  // namespace baton
