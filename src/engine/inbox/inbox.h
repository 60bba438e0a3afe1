// File: inbox.h
//
// What needs the human now, across every run (issue 16's "Needs you"):
//
//   question    an open question to the human: an agent's, a graph human
//               node's, sgai's work gate (answer: question.answer)
//   approval    a Sinfonia step returned for review (a pending "return"
//               hand-off), a supervised Stigmergy project ready to execute
//               without a standing approval, a Stigmergy story awaiting
//               verification (approval.approve / approval.reject)
//   board_card  a task in a board column whose gate is "human": only a
//               human moves it on (board.move)
//   message     an unread message whose push delivery failed or escalated
//   lost_agent  an agent marked lost, or silent past its lease, that still
//               holds tasks
//   mirror      a seed-file mirror whose last write failed
//
// Each item has an id that stays the same while the thing is unchanged and
// changes when it changes (it carries the row's seq, version or time), so
// inbox.dismiss hides an item until there is something new to see. Items
// are oldest first (the longest waiting on top).

#ifndef BATON_SRC_ENGINE_INBOX_INBOX_H_
#define BATON_SRC_ENGINE_INBOX_INBOX_H_

#ifndef BATON_ENGINE_ROOM_INBOX
#error "engine/inbox/ is above this target: link baton_engine_inbox (src/engine/README.md)"
#endif

#include <optional>
#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "store/tables/run_table.h"

namespace baton {

// One thing that needs the human.
struct InboxItem {
  std::string id;
  std::string kind;             // question, approval, board_card, ...
  std::optional<RunLabel> run;  // the run it belongs to, if any
  std::string from;             // who is waiting ("" for nobody in particular)
  std::string title;
  std::string body;
  std::string since;      // when it started waiting
  int64_t waited_ms = 0;  // how long, at the listing
  std::vector<std::string> actions;
  Json ref;  // what its actions need ({question}, {run, subject}, ...)
};

// {id, kind, run_id, run_title, profile (each null without a run), from,
// title, body, since, waited_ms, actions, ref}: an item as inbox.list
// answers it.
Json InboxItemToJson(const InboxItem& item);
// The item back from that answer, for a reader of inbox.list (the
// notifier, the CLI's rendering). REQUIRES: "j" is an item inbox.list gave.
InboxItem InboxItemFromJson(const Json& j);

// inbox.list {project?, run?} -> {count, by_kind: {kind: n}, items: [{id,
// kind, run_id, run_title, profile, from, title, body, since, waited_ms,
// actions, ref}]}.
Result<Json> ListInbox(OpContext& ctx, const Json& in);

// inbox.dismiss {item, note?}: hides the item until it changes, with an
// "inbox.dismissed" event. NotFound when no item has that id now.
Result<Json> DismissInboxItem(OpContext& ctx, const Json& in);

// inbox.notified {item, run?, title, outcome, attempts, exit_code, error}:
// records what `baton serve --notify-command` did for an item
// (ops/notifier.h), as an "inbox.notified" event.
Result<Json> RecordNotification(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_INBOX_INBOX_H_
