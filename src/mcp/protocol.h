// File: protocol.h
//
// JSON-RPC 2.0 as the Model Context Protocol uses it: the protocol versions
// baton speaks, the error codes, and the checks every incoming message goes
// through before a method runs. Pure functions; no I/O.
//
// Versions: 2025-03-26, 2025-06-18 and 2025-11-25 are "legacy" (initialize
// handshake, sessions; 2025-03-26 also receives JSON-RPC batches); 2026-07-28 is stateless (no handshake: every request carries
// its version and the client's capabilities in params._meta). See
// docs/mcp.md.

#ifndef BATON_SRC_MCP_PROTOCOL_H_
#define BATON_SRC_MCP_PROTOCOL_H_

#include <string>
#include <string_view>

#include "util/json_util.h"

namespace baton::mcp {

inline constexpr std::string_view kVersion20250326 = "2025-03-26";
inline constexpr std::string_view kVersion20250618 = "2025-06-18";
inline constexpr std::string_view kVersion20251125 = "2025-11-25";
inline constexpr std::string_view kVersion20260728 = "2026-07-28";
// Newest first; an initialize asking for something else gets the first
// legacy one.
inline constexpr std::string_view kSupportedVersions[] = {kVersion20260728, kVersion20251125,
                                                          kVersion20250618, kVersion20250326};

// JSON-RPC and MCP error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFoundLegacy = -32002;  // 2025: -32602 since 2026
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingClientCapability = -32021;
inline constexpr int kUnsupportedVersion = -32022;

// The _meta keys of a 2026-07-28 request and result.
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
// baton's own: an idempotency key for any tool call, whatever its arguments.
inline constexpr const char* kMetaIdempotencyKey = "io.baton/idempotencyKey";

bool IsSupportedVersion(std::string_view version);
// A version negotiated with initialize (2025-03-26, 2025-06-18, 2025-11-25).
bool IsLegacyVersion(std::string_view version);
// The version an initialize asking for "requested" gets.
std::string NegotiateLegacyVersion(std::string_view requested);
// {"supported": [...], "requested": ...}, the data of kUnsupportedVersion.
Json UnsupportedVersionData(std::string_view requested);

enum class MessageKind { kRequest, kNotification, kResponse };

// A message that passed Classify: its kind, and for requests the id.
struct Message {
  MessageKind kind;
  Json id;             // requests and responses
  std::string method;  // requests and notifications
  Json params;         // object, or null when absent
};

// Checks the JSON-RPC 2.0 envelope of one message. On failure returns the
// error response to send (code kInvalidRequest, id when it could be read).
// Batches (arrays) are refused: no supported version has them.
Result<Message> Classify(const Json& message, Json* error_response);

Json ResultResponse(const Json& id, Json result);
Json ErrorResponse(const Json& id, int code, std::string_view message, Json data = nullptr);
Json MakeNotification(std::string_view method, Json params);

// The server's Implementation object.
Json ServerInfo();

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_PROTOCOL_H_
