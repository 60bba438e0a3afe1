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

#include "formats/format.h"

namespace baton {

// One envelope as a run image's "handoffs" item (docs/formats.md). Refuses
// non-UTF-8 text, a missing or unclosed front matter, and a missing or
// non-numeric sequence, naming the source and line.
Result<Json> ReadSinfoniaEnvelope(std::string_view text, const std::string& source);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_SINFONIA_ENVELOPE_H_
