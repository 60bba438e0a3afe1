// File: genie_format.h
//
// Genie's two seed formats (format.h declares their readers and writers):
//
//   genie-wish   .genie/state/<slug>.json, the file-era wish state
//                {wish, groups: {name: {status, assignee?, dependsOn[],
//                startedAt?, completedAt?}}, createdAt, updatedAt}.
//   genie-board  a `genie task export` snapshot (.genie/roadmap.json):
//                {schemaVersion, meta, boards, tasks, task_dependencies, ...}.
//
// Both read into a run of profile "genie" laid out as engine/profiles/genie/wishes.cc and
// the task operations lay one out. A wish is a run whose meta holds "slug",
// "wish_file" and "groupsSignature" (the wishes table's row: slug, wish_file
// and signature) and whose groups are tasks of kind "group" keyed by the
// group's name, ordered by "position", with depends_on edges, the assignee in
// "assignee" and startedAt / completedAt in the task's meta. A board export
// is a run whose tasks are kind "task" keyed by Genie's task id ("t_..."),
// the lane in "board_column", every other column (claimed_by, claimed_at,
// wish, group_name, board_id, heartbeat_at, blocked_by, ...) in the task's
// meta under its column name, and the export's schemaVersion, meta rows,
// boards and column order in run.meta.genie_board.

#ifndef BATON_SRC_FORMATS_GENIE_FORMAT_H_
#define BATON_SRC_FORMATS_GENIE_FORMAT_H_

#include "formats/format.h"

namespace baton {

// What the wish.status operation returns for the wish run in "image" (an
// image of a genie run made by wish.create, as engine/interchange/imports.h exports it):
// {wish, run_id, title, wish_file, signature, groups: {name: {status,
// dependsOn, task_id, title, assignee?, startedAt?, completedAt?,
// blocked_reason?}}, createdAt, updatedAt} -- Genie's WishState with baton's
// fields added. Groups are the tasks of kind "group" with a key; dependsOn
// lists dependencies in the order of their position; updatedAt is the latest
// of the run's and the groups' updated_at. Never fails: missing fields give
// empty strings.
Json WishStateDocument(const RunImage& image);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_GENIE_FORMAT_H_
