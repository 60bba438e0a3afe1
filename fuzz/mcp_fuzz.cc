// libFuzzer target for the MCP protocol core: one input is one line as the
// stdio transport reads it (src/mcp/stdio.cc), parsed with ParseJson and
// checked with mcp::Classify. Beyond "never crash", it checks what a client
// relies on:
//   - text that is not JSON, and a message Classify refuses, get an error
//     response object: jsonrpc "2.0", the integer code (-32700, -32600), a
//     message, and the id when it could be read, else null;
//   - every response written is one line of valid JSON that reads back with
//     the same id and code;
//   - a request has a non-empty method and a string or integer id (the one
//     it sent), a notification a method and no id, a response an id and a
//     result or an error; params is an object or absent.
// The session behind Classify (McpSession::Handle) needs the whole engine
// and a store, and its tools reach the file system; it is left to the tests.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mcp/protocol.h"

namespace {

using baton::Json;
namespace mcp = baton::mcp;

[[noreturn]] void Fail(const char* what, const Json& value) {
  std::fprintf(stderr, "mcp: %s\n%s\n", what, baton::DumpJson(value).c_str());
  std::abort();
}

// "response" as the transport writes it: one line that reads back.
Json Written(const Json& response) {
  const std::string line = baton::DumpJson(response);
  if (line.find('\n') != std::string::npos) Fail("a response spans several lines", response);
  baton::Result<Json> back = baton::ParseJson(line, "response");
  if (!back.ok()) Fail("a response that is not valid JSON", response);
  return *back;
}

void CheckError(const Json& response, int code, const Json& id) {
  if (!response.is_object() || response.value("jsonrpc", Json()) != "2.0") {
    Fail("an error response without jsonrpc \"2.0\"", response);
  }
  const Json back = Written(response);
  const Json& error = back.value("error", Json());
  if (!error.is_object() || !error.value("code", Json()).is_number_integer() ||
      error["code"] != code) {
    Fail("an error response without its integer code", response);
  }
  if (!error.value("message", Json()).is_string() || error["message"].get<std::string>().empty()) {
    Fail("an error response without a message", response);
  }
  if (!back.contains("id") || back["id"] != id) Fail("an error response with another id", response);
}

// The id a refusal must echo: the message's, when it is one a client sends.
Json ReadableId(const Json& message) {
  if (!message.is_object() || !message.contains("id")) return nullptr;
  const Json& id = message["id"];
  return id.is_string() || id.is_number_integer() ? id : Json();
}

void CheckClassified(const Json& message, const mcp::Message& m) {
  const bool has_id = message.contains("id");
  if (m.kind != mcp::MessageKind::kResponse) {
    if (m.method.empty() || message["method"] != m.method) Fail("a method lost", message);
    if (!m.params.is_null() && !m.params.is_object()) Fail("params not an object", message);
  }
  switch (m.kind) {
    case mcp::MessageKind::kRequest:
      if (!has_id || (!m.id.is_string() && !m.id.is_number_integer()) || m.id != message["id"]) {
        Fail("a request without its id", message);
      }
      // Echoed ids read back unchanged.
      if (Written(mcp::ResultResponse(m.id, Json::object()))["id"] != m.id) {
        Fail("a result response with another id", message);
      }
      break;
    case mcp::MessageKind::kNotification:
      if (has_id) Fail("a notification with an id", message);
      break;
    case mcp::MessageKind::kResponse:
      if (!has_id || message.contains("method") ||
          (!message.contains("result") && !message.contains("error"))) {
        Fail("not a response", message);
      }
      break;
  }
}

// The version checks a request's params._meta goes through.
void CheckVersion(const mcp::Message& m) {
  const Json& meta = m.params.is_object() ? m.params.value("_meta", Json()) : Json();
  if (!meta.is_object() || !meta.contains(mcp::kMetaProtocolVersion)) return;
  const Json& v = meta[mcp::kMetaProtocolVersion];
  const std::string requested = v.is_string() ? v.get<std::string>() : v.dump();
  if (!mcp::IsLegacyVersion(mcp::NegotiateLegacyVersion(requested))) {
    Fail("negotiated a version that is not a legacy one", v);
  }
  if (mcp::IsLegacyVersion(requested) && !mcp::IsSupportedVersion(requested)) {
    Fail("a legacy version that is not supported", v);
  }
  CheckError(mcp::ErrorResponse(m.id, mcp::kUnsupportedVersion, "Unsupported protocol version",
                                mcp::UnsupportedVersionData(requested)),
             mcp::kUnsupportedVersion, m.id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  baton::Result<Json> message = baton::ParseJson(line, "message");
  if (!message.ok()) {
    CheckError(
        mcp::ErrorResponse(nullptr, mcp::kParseError, "Parse error: " + message.status().message()),
        mcp::kParseError, nullptr);
    return 0;
  }
  Json error;
  baton::Result<mcp::Message> m = mcp::Classify(*message, &error);
  if (!m.ok()) {
    CheckError(error, mcp::kInvalidRequest, ReadableId(*message));
    return 0;
  }
  CheckClassified(*message, *m);
  CheckVersion(*m);
  return 0;
}
