#include "formats/format.h"

namespace baton {

Result<RunImage> ReadStigmergyState(std::string_view text, const std::string& source) {
  return InternalError(source + ": this format's reader is not written yet");
}

Result<FormatOutput> WriteStigmergyState(const RunImage& image) {
  return InternalError("this format's writer is not written yet");
}

}  // namespace baton
