// libFuzzer target for the HTTP request path: one input is the bytes one
// connection sends (request line, headers, body; several requests when
// pipelined), read by the connection front's head/body reader
// (src/http/front.cc) and run through httplib's request processing into the
// routes of a real HttpServer over an in-memory store (Host and Origin
// checks, the callers' headers, POST /v1/ops/{name} into Api::Call, /mcp).
// Beyond "never crash", it checks what a client relies on:
//   - every input gets at least one response, and the output is a sequence
//     of whole HTTP/1.1 responses, each with a status line and a head that
//     ends, and a Content-Length body (none after HEAD) or a chunked one
//     (never a stream: ServeBytes runs no content provider);
//   - a response with a JSON content type has a body that parses as JSON.
// Composed operations (mail.wait, graph.run, ...) are answered 503 without
// running: they wait or run commands, which a fuzzer must not.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "http/server.h"
#include "ops/api.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view out) {
  std::fprintf(stderr, "http: %s\n%.*s\n", what, static_cast<int>(std::min<size_t>(out.size(), 4000)),
               out.data());
  std::abort();
}

baton::HttpServer& Server() {
  static std::unique_ptr<baton::Api> api = [] {
    baton::ApiOptions options;
    options.store.location = ":memory:";
    options.validate_output = true;
    baton::Result<std::unique_ptr<baton::Api>> opened = baton::Api::Open(options);
    if (!opened.ok()) Fail("cannot open the store", opened.status().ToString());
    if (!(*opened)->EnsureStore().ok()) Fail("cannot create the store", "");
    return std::move(opened).value();
  }();
  static baton::HttpServer server(*api, [] {
    baton::HttpOptions o;
    o.max_body = 64 << 10;
    // Past identification: headers name the caller, and nobody holds a
    // grant, so no input runs a command.
    o.auth = "none";
    return o;
  }());
  return server;
}

// Checks "out" is whole responses; returns how many.
int CheckResponses(std::string_view out) {
  int count = 0;
  size_t pos = 0;
  while (pos < out.size()) {
    if (out.substr(pos, 9) != "HTTP/1.1 ") Fail("output that is not a status line", out.substr(pos));
    const size_t head_end = out.find("\r\n\r\n", pos);
    if (head_end == std::string_view::npos) Fail("a response head that does not end", out.substr(pos));
    const int status = std::atoi(std::string(out.substr(pos + 9, 3)).c_str());
    if (status < 100 || status > 599) Fail("a status out of range", out.substr(pos));
    std::string head(out.substr(pos, head_end - pos));
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    pos = head_end + 4;
    if (status == 100) continue;  // interim: the response follows
    ++count;
    const size_t cl = head.find("\r\ncontent-length: ");
    std::string_view body;
    const bool next_response_or_end = pos == out.size() || out.substr(pos, 9) == "HTTP/1.1 ";
    if (cl != std::string::npos && next_response_or_end) {
      // The answer to HEAD: Content-Length is the GET's, no body follows
      // (no body here begins with a status line).
      continue;
    }
    if (cl != std::string::npos) {
      const size_t length = std::strtoul(head.c_str() + cl + 18, nullptr, 10);
      if (out.size() - pos < length) Fail("a body shorter than its Content-Length", out);
      body = out.substr(pos, length);
      pos += length;
    } else if (head.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
      // Not run (no content provider under ServeBytes): at most a head.
      continue;
    }
    if (head.find("content-type: application/json") != std::string::npos && !body.empty() &&
        !baton::ParseJson(std::string(body), "response").ok()) {
      Fail("a JSON response that does not parse", body);
    }
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  const std::string out = Server().ServeBytes(raw, /*run_long=*/false);
  if (CheckResponses(out) == 0) Fail("no response", std::string(raw) + "\n=>\n" + out);
  return 0;
}
