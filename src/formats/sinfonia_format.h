// File: sinfonia_format.h
//
// Sinfonia's workflow index, `.sinfonica/handoffs/<session>/workflow.md`
// (reference/seed-systems.md part two §3.2–3.3), read into a run image and
// written back; the reader and writer themselves are ReadSinfoniaIndex and
// WriteSinfoniaIndex (format.h).
//
// The written form is exactly what Sinfonia's index-manager.ts renders —
// front matter (workflow_id, workflow_status, current_step,
// current_step_index, total_steps, session_id, created_at, updated_at), then
// `## Goal`, `## Steps`, `## Artifacts`, `## Decisions`, `## Sessions` and
// `## Context` — except that table cells are escaped (`\` → `\\`, `|` → `\|`,
// a line break → `<br>`, a literal `<br>` → `\<br>`), so a note holding `|`
// no longer breaks its row (Sinfonia's bug), and a Goal or Context line that
// would start a section is written `\## …`. A cell without those characters
// is written as Sinfonia writes it, so its files round-trip byte for byte.
//
// The run image is laid out as the sinfonia operations lay out a run
// (engine/profiles/sinfonia/sinfonia.h): run status = workflow_status (machine
// sinfonia.workflow), cursor = current_step, cursor_index =
// current_step_index, run.meta {workflow_id, goal, context}; steps are tasks
// of kind "step" (key = the step, position = its 1-based place, assignee =
// the persona, meta {started_at, completed_at, notes}); artifacts are
// "handoffs" (id = the name, source → target from the notes); decisions are
// "approvals" (subject = the Handoff ID cell: subject_kind "step" when it
// names a step, "handoff" otherwise, "run" when empty; time = the
// timestamp); sessions are "sessions".
//
// Indexes written by hand or by an LLM are read too: no or partial front
// matter, a `## Stages` list (`N. Title (Persona)` with `- Status:` lines,
// statuses mapped as Sinfonia's Pi surface maps them), `- Overall Status:` and
// `- Current Stage: Phase N` lines, a `## Decisions` or `## Decision Log`
// list. What the model cannot hold is kept in run.meta.kept.sinfonia and
// written back:
//   front_matter  the front matter's other lines, verbatim ("persona: coda")
//   preamble      the text between the front matter and the first section
//                 (a title heading, "- Workflow:" lines); its "- Overall
//                 Status:" and "- Current Stage:" lines are rewritten from
//                 the run when written, so they never contradict it
//   sections      [{heading, text}] sections of other names, in order
//   text          {steps|artifacts|decisions|sessions: lines of those
//                 sections that are not table rows (an artifact list)}
//   total_steps, session_id   the front matter's, when its tables disagree
// A stage's other lines ("- Goal: …", "- Outcome: …") become its notes,
// one per line, so they are written in the Notes column.

#ifndef BATON_SRC_FORMATS_SINFONIA_FORMAT_H_
#define BATON_SRC_FORMATS_SINFONIA_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/status.h"
#include "formats/format.h"

namespace baton {

// The workflow index of "image" as data, in the shape the sinfonia.state
// operation returns: {run_id, workflow_id, workflow_status, current_step,
// current_step_index, total_steps, session_id, created_at, updated_at,
// version, title, description, goal, steps[], artifacts[], decisions[],
// sessions[], context}. For the image of a run made by the sinfonia
// operations (engine/interchange/imports.h ExportImage) it equals SinfoniaState's answer;
// for a run of another profile the statuses are converted and its tasks are
// the steps (see WriteSinfoniaIndex). One difference, deliberate: an
// imported artifact whose notes were not "source → target" keeps its notes
// (handoff meta.notes). FailedPrecondition when the image has no run object.
Result<Json> SinfoniaIndexOf(const RunImage& image);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_SINFONIA_FORMAT_H_
