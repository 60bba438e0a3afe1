// File: format.h
//
// A seed format reads one of the five orchestrators' files into a run image
// and writes a run image back as that file (DESIGN.md §7). The run image is
// one run in the canonical model's own terms — the run row, its tasks,
// messages, history, decisions, sessions, hand-offs and usage — described in
// docs/formats.md "The run image". Readers are tolerant: keys they do not
// know are kept in the image (run.meta.kept.<format>, JSON pointer → value)
// and written back by the same format. Writers are strict and canonical: the
// same image always gives the same bytes.
//
// Formats are pure: text in, image out, and back. No I/O, no store; the
// engine (engine/interchange/imports.h) moves images in and out of the store, and the
// fuzz targets in fuzz/ drive the readers directly.
//
// Errors: a reader refuses bad input with InvalidArgument naming the source,
// the place (line and column, or the field's JSON pointer) and the reason. A
// writer refuses an image it cannot express at all with FailedPrecondition;
// what it can only partly express it writes, listing the losses as notes.

#ifndef BATON_SRC_FORMATS_FORMAT_H_
#define BATON_SRC_FORMATS_FORMAT_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

// One run in canonical terms (docs/formats.md).
using RunImage = Json;

struct FormatOutput {
  std::string text;
  // What the target cannot express, one sentence each ("messages: sinfonia's
  // workflow.md has no mailbox; 3 messages not written").
  std::vector<std::string> notes;
};

struct Format {
  const char* name;     // "sgai", as `baton import --format` spells it
  const char* profile;  // the profile of the runs it reads into
  const char* file;     // where the system keeps it: ".sgai/state.json"
  const char* summary;
  Result<RunImage> (*read)(std::string_view text, const std::string& source);
  Result<FormatOutput> (*write)(const RunImage& image);
};

std::span<const Format> AllFormats();
// InvalidArgument listing the formats when "name" is none of them.
Result<const Format*> FindFormat(std::string_view name);

// The formats (one .cc each).
Result<RunImage> ReadSgaiState(std::string_view text, const std::string& source);
Result<FormatOutput> WriteSgaiState(const RunImage& image);
Result<RunImage> ReadGenieWish(std::string_view text, const std::string& source);
Result<FormatOutput> WriteGenieWish(const RunImage& image);
Result<RunImage> ReadGenieBoard(std::string_view text, const std::string& source);
Result<FormatOutput> WriteGenieBoard(const RunImage& image);
Result<RunImage> ReadGraphState(std::string_view text, const std::string& source);
Result<FormatOutput> WriteGraphState(const RunImage& image);
Result<RunImage> ReadStigmergyState(std::string_view text, const std::string& source);
Result<FormatOutput> WriteStigmergyState(const RunImage& image);
Result<RunImage> ReadSinfoniaIndex(std::string_view text, const std::string& source);
Result<FormatOutput> WriteSinfoniaIndex(const RunImage& image);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_FORMAT_H_
