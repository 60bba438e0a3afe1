// File: sgai_format.h
//
// sgai's workflow state (.sgai/state.json, sgai-RICH's Workflow struct) as a
// run image and back. ReadSgaiState and WriteSgaiState (format.h) are the
// format; SgaiDocument is the one renderer of the document, shared by the
// writer and by the `sgai.state` operation.
//
// The image is laid out as the sgai operations lay out a run (engine/profiles/sgai/sgai.h):
//   run.meta      task, goalChecksum, visitCounts, currentAgent, agentSequence,
//                 sessionId, interactionMode, modelStatuses, currentModel,
//                 summary, summaryManual — each only when the file has it;
//                 kept.sgai: unknown keys (JSON pointer → value);
//                 sgaiFileKeys: the document keys the file had (see below).
//   tasks         todos: kind "todo", key "todo:<agent>:<id>", assignee the
//                 current agent; projectTodos: kind "project_todo", key
//                 "project_todo:<id>"; meta {todo_id, priority}; priority
//                 high 2, medium 1, else 0; position = index in the list.
//   history       progress: kind "run.progress", time = the entry's
//                 timestamp, payload {agent, description}.
//   messages      messages, then the legacy messageHistory (read unless it
//                 says otherwise); meta.sgai_id = the file's id when it has one.
//   usage         cost.byAgent[].steps[], one row each, in file order.
//   questions     humanMessage / multiChoiceQuestion: one open question.
//
// Legacy (sgai-SNAP and the TypeScript plugin): "message" is the old
// humanMessage and is used when humanMessage is empty; "messageHistory" holds
// read messages; status "human-communication" reads as waiting-for-human;
// progress entries may be plain strings. What cannot be mapped ("navigate",
// a "message" beside a humanMessage) is kept as an unknown key.
//
// A run made by the sgai operations has no sgaiFileKeys and its document has
// every key, as `sgai.state` always gave it. A run read from a file keeps the
// file's shape: a key is written when the file had it or it is not empty now
// (sgai itself omits empty fields).

#ifndef BATON_SRC_FORMATS_SGAI_FORMAT_H_
#define BATON_SRC_FORMATS_SGAI_FORMAT_H_

#include <string>
#include <vector>

#include "formats/format.h"

namespace baton {

// The state.json document of "image", keys in sgai's order. Never fails: an
// image of another profile, or with fields of the wrong type, gives the best
// document it can, and each loss is added to "notes" (when not null).
nlohmann::ordered_json SgaiDocument(const RunImage& image, std::vector<std::string>* notes);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_SGAI_FORMAT_H_
