// File: sinfonia_internal.h
//
// What the Sinfonia format's reader (sinfonia_format.cc), writer
// (sinfonia_writer.cc) and text helpers (sinfonia_text.cc) share; not for
// other callers.

#ifndef BATON_SRC_FORMATS_SINFONIA_INTERNAL_H_
#define BATON_SRC_FORMATS_SINFONIA_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/sinfonia_format.h"

namespace baton {

// Shared by the reader and the writer; not for other callers.
namespace sinfonia_format_internal {

inline constexpr std::string_view kWorkflowMachine = "sinfonia.workflow";
inline constexpr std::string_view kStepMachine = "sinfonia.step";

// The four tables: their section name, their columns as Sinfonia heads them,
// and the key of the kept text beside them.
struct TableSpec {
  std::string_view section;  // "Steps"
  std::vector<std::string_view> columns;
  std::string_view text_key;  // "steps"
};
const TableSpec& StepsTable();
const TableSpec& ArtifactsTable();
const TableSpec& DecisionsTable();
const TableSpec& SessionsTable();

// A cell as written ("a \| b<br>c") and back; Unescape is the inverse of
// Escape for every string, and takes a cell already trimmed.
std::string EscapeCell(std::string_view value);
std::string UnescapeCell(std::string_view cell);

// True when "line" starts a section as Sinfonia's parser sees one: "##"
// then a space, a tab or nothing.
bool IsSectionHeading(std::string_view line);

// Goal and Context text: a line that would start a section gets one more
// leading backslash ("## x" → "\## x", "\## x" → "\\## x"), and back.
std::string EscapeBlock(std::string_view text);
std::string UnescapeBlock(std::string_view text);

// Space, tab, CR, LF, VT, FF.
bool IsSpace(char c);
std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);

// The front matter's closing line ("---", trailing blanks allowed), and a
// "key: value" line of one of the eight keys the writer writes itself.
bool IsFrontMatterDelimiter(std::string_view line);
bool IsOwnFrontMatterLine(std::string_view line);

// index-manager.ts parseFrontmatter's line, /^([a-z_]+):\s*(.*)$/i: the
// key and the trimmed value; and whether the key is one of the eight.
std::optional<std::pair<std::string_view, std::string_view>> KeyValue(std::string_view line);
bool IsOwnKey(std::string_view key);

// The machines' statuses (types.ts WorkflowStatus, WorkflowStepStatus).
inline constexpr std::string_view kWorkflowStatuses[] = {"created", "in-progress", "complete",
                                                         "blocked", "failed"};
inline constexpr std::string_view kStepStatuses[] = {"pending", "in-progress", "completed",
                                                     "blocked", "failed"};
template <size_t N>
bool OneOf(const std::string_view (&list)[N], std::string_view s) {
  for (std::string_view x : list) {
    if (x == s) return true;
  }
  return false;
}
// "a, b, c".
template <size_t N>
std::string Allowed(const std::string_view (&list)[N]) {
  std::string out;
  for (std::string_view x : list) out += (out.empty() ? "" : ", ") + std::string(x);
  return out;
}

// The Pi surface's status words (workflow-state.ts), matched as it matches
// them, anywhere in the lower-cased status.
bool PiActive(std::string_view status);
bool PiTerminal(std::string_view status);
// A free-form status in sinfonia.step / sinfonia.workflow terms.
std::string StepFromToken(std::string_view raw);
std::string WorkflowFromToken(std::string_view raw);

// "N. Title": the digits and the trimmed title (workflow-state.ts
// parseStages' /^\s*(\d+)\.\s+(.+)$/).
struct StageLine {
  std::string_view digits;
  std::string_view title;
};
std::optional<StageLine> ParseStageLine(std::string_view line);
// "- Key: value" (key in lower case): the trimmed value.
std::optional<std::string_view> BulletField(std::string_view line, std::string_view key);
// A list entry ("- x", "* x", "+ x", "12. x"): its text.
std::optional<std::string_view> ListEntry(std::string_view line);
// Digits as a number, INT64_MAX when too long.
int64_t SaturatingNumber(std::string_view digits);
// workflow-state.ts's step slug of a stage title.
std::string PiSlug(std::string_view title);
// "Title (Persona)" → {"Title", "persona"} when the parenthetical is one
// word; else {title, ""}.
std::pair<std::string, std::string> TitleAndPersona(std::string_view title);
// A log entry "`2026-03-05`: text" → {time, text}; {"", entry} undated.
std::pair<std::string, std::string> Dated(std::string_view entry);

// Where a "- Overall Status: …" or "- Current Stage: …" line of free text
// puts its value: the offset just past "<label>:", or npos. "label" is
// lower-case; the match ignores case and needs a "-" before it on the line.
size_t LabelValueAt(std::string_view line, std::string_view label);

}  // namespace sinfonia_format_internal
}  // namespace baton


#endif  // BATON_SRC_FORMATS_SINFONIA_INTERNAL_H_
