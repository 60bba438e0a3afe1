// File: genie_internal.h
//
// Inside the Genie formats (not for other rooms): what genie_format.cc (the
// wish state) and genie_board_format.cc (the task export) share -- JSON access
// that never throws, Genie's four statuses, dependency cycles, the run image's
// frame, and how a writer picks, converts and notes the tasks it lists.

#ifndef BATON_SRC_FORMATS_GENIE_INTERNAL_H_
#define BATON_SRC_FORMATS_GENIE_INTERNAL_H_

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/format.h"

namespace baton::genie_internal {

using OrderedJson = nlohmann::ordered_json;

inline constexpr char kWishFormat[] = "genie-wish";
inline constexpr char kBoardFormat[] = "genie-board";
inline constexpr char kAllowedStatuses[] = "blocked, ready, in_progress, done";

// obj[key] when "obj" is an object that has it, else nullptr.
const Json* Find(const Json& obj, std::string_view key);
// obj[key] when it is a string / an integer, else "fallback".
std::string StrOr(const Json& obj, std::string_view key, const std::string& fallback = "");
int64_t IntOr(const Json& obj, std::string_view key, int64_t fallback);
// obj[key] when it is an object / an array, else a null value.
const Json& ObjectAt(const Json& obj, std::string_view key);
const Json& ArrayAt(const Json& obj, std::string_view key);
// obj[key] when it is a string, else null.
const Json& StringAt(const Json& obj, std::string_view key);

// "text" as a JSON string literal, for messages.
std::string Quote(const std::string& text);
// JSON.stringify(doc, null, 2), with no final newline; invalid UTF-8 replaced.
std::string Dump(const OrderedJson& doc);
// "a, b, c": at most 20 names, then how many there are; "(none)" for none.
std::string JoinNames(const std::vector<std::string>& names);

// blocked, ready, in_progress or done: what Genie's files hold.
bool IsGenieStatus(std::string_view s);

// The first dependency cycle of a graph given as each node's dependencies:
// the nodes from the first one round to it again, or empty. Iterative, so a
// long chain cannot exhaust the stack.
std::vector<size_t> FindCycle(const std::vector<std::vector<size_t>>& deps);
// "a -> b -> a".
std::string CyclePath(const std::vector<size_t>& cycle, const std::vector<std::string>& names);

// A genie run's status from its items' Genie statuses: pending while nothing
// started, running once something has, completed when every item is done (a
// run with no items is pending).
std::string RunStatusFor(const std::vector<std::string>& statuses);

// An image of a new genie run (machine baton.run) with no tasks yet.
Json NewImage(const char* format, const std::string& source, const std::string& status,
              const std::string& title, Json meta);
// Puts "kept" (pointer -> value) into run.meta.kept.<format> unless empty.
void KeepInImage(Json& image, const char* format, const Json& kept);

// The image's run; FailedPrecondition when it has none.
Result<const Json*> RunOf(const RunImage& image);
// run.meta.kept.<format>, or a null value.
const Json& KeptOf(const Json& run, const char* format);

// One task a Genie file lists, with its status in Genie's four and its
// dependencies, as indexes among the listed tasks.
struct Picked {
  const Json* task;
  std::string status;
  std::vector<size_t> deps;
};

// The tasks of "image" that "keep" accepts, in position order. Statuses of
// another vocabulary (another profile's, or genie's failed / cancelled /
// archived) go through their phase: pending work is ready or blocked by its
// dependencies as Genie decides, active is in_progress, waiting and failed
// are blocked, done and cancelled are done; each conversion is noted.
// Dependencies on tasks not listed are dropped (noted). FailedPrecondition
// for a dependency cycle, which Genie refuses.
Result<std::vector<Picked>> PickTasks(const RunImage& image, const Json& run,
                                      const std::function<bool(const Json&)>& keep,
                                      std::vector<std::string>& notes);

// Notes for what a Genie file ("file", as a sentence names it) never holds:
// messages, decisions, sessions, hand-offs, usage, open questions, the
// systems' own history (run.progress, sgai.handoff, stigmergy.signal,
// graph.node) and task bodies.
void NoteUnwritten(const RunImage& image, const std::string& file, std::vector<std::string>& notes);

// A name for "task" no other has taken: "preferred", else its ref (or id),
// else either with "#2", "#3", ...; adds it to "taken".
std::string UniqueName(const std::string& preferred, const Json& task,
                       std::set<std::string>& taken);

}  // namespace baton::genie_internal

#endif  // BATON_SRC_FORMATS_GENIE_INTERNAL_H_
