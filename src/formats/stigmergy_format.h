// File: stigmergy_format.h
//
// Stigmergy's `.ai/state.json` (format "stigmergy", profile "stigmergy";
// reference/seed-systems.md part 2 §2). ReadStigmergyState (format.h) reads
// schema 2.0 and the 3.x variants into a run image laid out as the
// stigmergy.* operations lay out a run (engine/profiles/stigmergy/stigmergy.cc):
//
//   run      status = project_status (a 2.0 status; 3.x ones are mapped, see
//            below), title = project_name, meta {schema_version "2.0",
//            project_name, autonomy_mode, system_signal, kept.stigmergy}
//   tasks    kind "epic" (key = epic_id as text, position = place in the
//            file, 1-based), kind "story" (key = story_id, parent "epic:<key>"),
//            kind "issue" (key = issue_id, created_at = timestamp,
//            meta.history_ref)
//   history  kind "stigmergy.signal": time = timestamp, agent = agent_id,
//            summary, files = files_modified, payload {agent_id, signal,
//            system_signal, files_modified}
//
// Keys the 2.0 shape does not know are kept: top-level and project_manifest
// ones in run.meta.kept.stigmergy, an item's own in its task's
// meta.kept.stigmergy, a history entry's in its payload's kept.stigmergy (each
// JSON pointer → value, relative to where the writer puts them back), so that
// they follow their item when baton reorders or adds items.
//
// Schema 3.x (3.0, 3.1): project_status is mapped onto the 2.0 machine by the
// phase the project is in (NEEDS_INITIALIZATION and AWAITING_APPROVAL_BRIEF →
// NEEDS_BRIEFING, the PRD/architecture/blueprint steps and
// GRAND_BLUEPRINT_PHASE → NEEDS_PLANNING, AWAITING_APPROVAL_BLUEPRINT and
// AWAITING_EXECUTION_APPROVAL → READY_FOR_EXECUTION, whose supervised gate is
// that approval, AWAITING_QA → EXECUTION_IN_PROGRESS, EXECUTION_FAILED →
// EXECUTION_HALTED, PAUSED_BY_USER → EXECUTION_HALTED when it paused
// execution, else the phase of status_before_pause). The original
// schema_version and project_status are kept as "/stigmergy_source"; goal,
// artifacts_created, code_indexed, secrets and status_before_pause stay
// top-level kept keys. project_manifest.tasks become stories of one epic made
// for them (failure_count → attempts, agent → assignee, dependencies →
// depends_on; the original fields also kept on the story), and 3.1 history
// entries {id, source, agent_id, message} become events whose summary is the
// message. The earlier 2.0 draft's statuses (PLANNING_IN_PROGRESS,
// SYSTEM_AUDIT_PENDING, story DONE, QA_PENDING…, issue CLOSED) are read the
// same way, the original kept as "source_status" on the item.
//
// WriteStigmergyState always writes schema 2.0: StigmergyDocument, dumped
// with two-space indentation and a final newline (fs-extra's writeJson).

#ifndef BATON_SRC_FORMATS_STIGMERGY_FORMAT_H_
#define BATON_SRC_FORMATS_STIGMERGY_FORMAT_H_

#include <string>
#include <vector>

#include "formats/format.h"

namespace baton {

// The 2.0 document of "image". For a run made by the stigmergy operations it
// equals what `stigmergy.state` returns; an image of another profile is
// written as best 2.0 can (statuses through their phase, tasks as the stories
// of one epic), each loss appended to "notes" (which may be null).
nlohmann::ordered_json StigmergyDocument(const RunImage& image, std::vector<std::string>* notes);

// epic_id as 2.0 writes an epic's key: a number when the key is one of at
// most 18 digits, else the key as it is (engine/profiles/stigmergy/stigmergy.cc EpicId).
Json StigmergyEpicId(const std::string& key);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_STIGMERGY_FORMAT_H_
