// File: sinfonia_envelope.h
//
// Sinfonia's hand-off envelopes: the markdown files beside a session's
// workflow.md (`dispatch-01-amadeus.md`, or writer.ts's
// `NNN-<source>-to-<target>.md`), each a front matter — handoff_id,
// session_id, sequence, source_persona, target_persona, handoff_type,
// status, created_at, word_count, and after review approval, approved_by,
// approved_at — and a body. `baton import --format sinfonia FOLDER` reads
// them with the index, as the run's hand-offs.

#ifndef BATON_SRC_FORMATS_SINFONIA_ENVELOPE_H_
#define BATON_SRC_FORMATS_SINFONIA_ENVELOPE_H_

#include <string>
#include <string_view>
#include <vector>

#include "formats/format.h"

namespace baton {

// One envelope as a run image's "handoffs" item (docs/formats.md), in every
// shape Sinfonia's personas write: writer.ts's front matter; front matter
// with dispatch_id / return_id and no sequence; or no front matter, a
// "# Dispatch Envelope" heading and "- Session: …" bullets. A sequence the
// front matter does not give comes from the file name (dispatch-01-coda.md)
// or the id: "sequence" is then null and meta.file_number holds the number.
// Refuses, naming the source and line, non-UTF-8 text, a file that is no
// envelope, an unclosed front matter, and an envelope nothing numbers.
Result<Json> ReadSinfoniaEnvelope(std::string_view text, const std::string& source);

// Reads "envelopes" ([{name, content}], a session folder's files) into
// "image"'s hand-offs, as Sinfonia's crash recovery does: a file it cannot
// read is skipped, and named with the reason in the returned notes; an
// envelope numbered only by its file name follows the numbered ones (file
// numbers count stages and repeat), by number, type and name; an
// Artifacts row of the same id takes the envelope's body and front matter.
std::vector<std::string> AddSinfoniaEnvelopes(RunImage& image, const Json& envelopes);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_SINFONIA_ENVELOPE_H_
