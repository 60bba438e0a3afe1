#include "formats/format.h"

namespace baton {

Result<RunImage> ReadGenieWish(std::string_view text, const std::string& source) {
  return InternalError(source + ": this format's reader is not written yet");
}

Result<FormatOutput> WriteGenieWish(const RunImage& image) {
  return InternalError("this format's writer is not written yet");
}

Result<RunImage> ReadGenieBoard(std::string_view text, const std::string& source) {
  return InternalError(source + ": this format's reader is not written yet");
}

Result<FormatOutput> WriteGenieBoard(const RunImage& image) {
  return InternalError("this format's writer is not written yet");
}

}  // namespace baton
