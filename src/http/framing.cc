// The request framing of the connection front (front.h, ReadFraming): where
// one request ends in the bytes a connection sent, read exactly as httplib
// reads it, and every size refusal naming the limit that applied.

#include <string>
#include <string_view>

#include "http/front.h"

namespace baton::http {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Framing Error(int status, std::string message) {
  Framing f;
  f.kind = Framing::kError;
  f.http_status = status;
  f.message = std::move(message);
  return f;
}

// One line as httplib's stream_line_reader reads it: up to and including
// '\n', or npos when the line is not complete yet.
size_t LineEnd(std::string_view buf, size_t from) {
  const size_t nl = buf.find('\n', from);
  return nl == std::string_view::npos ? nl : nl + 1;
}

// The chunked body from "from" as httplib's read_content_chunked reads it;
// kComplete with the length of head and body.
Framing ReadChunked(std::string_view buf, size_t from, const FrontLimits& limits, Framing f) {
  size_t pos = from;
  size_t data = 0;
  const size_t raw_limit = limits.max_body + limits.max_header_bytes;
  auto need_more = [&]() {
    if (buf.size() - from > raw_limit) {
      return Error(413, "the request body is larger than the limit of " +
                            std::to_string(limits.max_body) + " bytes (--max-body)");
    }
    return f;  // kNeedMore
  };
  for (;;) {
    const size_t end = LineEnd(buf, pos);
    if (end == std::string_view::npos) return need_more();
    const std::string line(buf.substr(pos, end - pos));
    char* stop = nullptr;
    errno = 0;
    const unsigned long size = std::strtoul(line.c_str(), &stop, 16);
    if (stop == line.c_str() || size == ULONG_MAX || errno == ERANGE) {
      return Error(400, "Transfer-Encoding: chunked: a chunk size line that is not hexadecimal");
    }
    pos = end;
    if (size == 0) break;
    if (size > limits.max_body || data + size > limits.max_body) {
      return Error(413, "the request body is larger than the limit of " +
                            std::to_string(limits.max_body) + " bytes (--max-body)");
    }
    data += size;
    if (buf.size() - pos < size) return need_more();
    pos += size;
    const size_t crlf = LineEnd(buf, pos);
    if (crlf == std::string_view::npos) return need_more();
    if (buf.substr(pos, crlf - pos) != "\r\n") {
      return Error(400, "Transfer-Encoding: chunked: a chunk not followed by CRLF");
    }
    pos = crlf;
  }
  // Trailer lines up to an empty one.
  for (;;) {
    const size_t end = LineEnd(buf, pos);
    if (end == std::string_view::npos) return need_more();
    const std::string_view line = buf.substr(pos, end - pos);
    pos = end;
    if (line == "\r\n") break;
    if (line.size() > 8192) return Error(431, "a chunked trailer line is longer than 8192 bytes");
  }
  f.kind = Framing::kComplete;
  f.length = pos;
  return f;
}

}  // namespace

Framing ReadFraming(std::string_view buf, const FrontLimits& limits) {
  Framing f;
  const std::string head_limit = "the request head (request line and headers) is larger than the limit of " +
                                 std::to_string(limits.max_header_bytes) + " bytes (--max-header-bytes)";
  // The request line: up to the first LF, whatever it ends with.
  size_t pos = LineEnd(buf, 0);
  if (pos == std::string_view::npos) {
    return buf.size() > limits.max_header_bytes ? Error(431, head_limit) : f;
  }
  {
    std::string_view line = buf.substr(0, pos);
    const size_t sp1 = line.find(' ');
    if (sp1 != std::string_view::npos) {
      f.method = std::string(line.substr(0, sp1));
      const size_t sp2 = line.find(' ', sp1 + 1);
      std::string_view target = line.substr(sp1 + 1, sp2 == std::string_view::npos ? 0 : sp2 - sp1 - 1);
      f.path = std::string(target.substr(0, target.find('?')));
    }
  }
  // Headers: CRLF lines up to an empty one; httplib skips lines that end in
  // a bare LF, so they are skipped here too.
  std::string_view content_length, transfer_encoding;
  int content_lengths = 0, transfer_encodings = 0;
  for (;;) {
    const size_t end = LineEnd(buf, pos);
    if (end == std::string_view::npos) {
      return buf.size() > limits.max_header_bytes ? Error(431, head_limit) : f;
    }
    if (end > limits.max_header_bytes) return Error(431, head_limit);
    std::string_view line = buf.substr(pos, end - pos);
    pos = end;
    if (line.size() < 2 || line[line.size() - 2] != '\r') continue;
    if (line == "\r\n") break;
    line.remove_suffix(2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (value.empty()) continue;  // httplib drops a header without a value
    if (IEquals(key, "Content-Length")) {
      ++content_lengths;
      content_length = value;
    } else if (IEquals(key, "Transfer-Encoding")) {
      ++transfer_encodings;
      transfer_encoding = value;
    } else if (IEquals(key, "Expect")) {
      f.expect_continue = IEquals(value, "100-continue");
    }
  }
  f.head_length = pos;
  if (content_lengths > 1 || transfer_encodings > 1) {
    return Error(400, std::string(content_lengths > 1 ? "Content-Length" : "Transfer-Encoding") +
                          ": given more than once");
  }
  if (transfer_encodings == 1) {
    if (!IEquals(transfer_encoding, "chunked")) {
      return Error(501, "Transfer-Encoding: only chunked is supported (got \"" +
                            std::string(transfer_encoding.substr(0, 64)) + "\")");
    }
    if (content_lengths == 1) {
      return Error(400, "Content-Length and Transfer-Encoding: a request may not carry both");
    }
    return ReadChunked(buf, pos, limits, f);
  }
  uint64_t length = 0;
  if (content_lengths == 1) {
    if (content_length.size() > 19) {
      return Error(413, "the request body is larger than the limit of " +
                            std::to_string(limits.max_body) + " bytes (--max-body)");
    }
    for (char c : content_length) {
      if (c < '0' || c > '9') {
        return Error(400, "Content-Length: must be a decimal number of bytes (got \"" +
                              std::string(content_length) + "\")");
      }
      length = length * 10 + static_cast<uint64_t>(c - '0');
    }
    if (length > limits.max_body) {
      return Error(413, "the request body (" + std::to_string(length) +
                            " bytes) is larger than the limit of " +
                            std::to_string(limits.max_body) + " bytes (--max-body)");
    }
  }
  if (buf.size() - pos < length) return f;
  f.kind = Framing::kComplete;
  f.length = pos + length;
  return f;
}

}  // namespace baton::http
