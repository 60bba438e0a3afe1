#include "mcp/protocol.h"

#include <algorithm>

namespace baton::mcp {

bool IsSupportedVersion(std::string_view version) {
  return std::find(std::begin(kSupportedVersions), std::end(kSupportedVersions), version) !=
         std::end(kSupportedVersions);
}

bool IsLegacyVersion(std::string_view version) {
  return version == kVersion20250326 || version == kVersion20250618 ||
         version == kVersion20251125;
}

std::string NegotiateLegacyVersion(std::string_view requested) {
  return std::string(IsLegacyVersion(requested) ? requested : kVersion20251125);
}

Json UnsupportedVersionData(std::string_view requested) {
  Json supported = Json::array();
  for (std::string_view v : kSupportedVersions) supported.push_back(v);
  return Json{{"supported", supported}, {"requested", requested}};
}

Result<Message> Classify(const Json& message, Json* error_response) {
  auto refuse = [&](const Json& id, const std::string& why) -> Status {
    *error_response = ErrorResponse(id, kInvalidRequest, "Invalid Request: " + why);
    return InvalidArgumentError(why);
  };
  if (message.is_array()) return refuse(nullptr, "batches are not supported");
  if (!message.is_object()) return refuse(nullptr, "a message must be a JSON object");
  Json id = nullptr;
  const bool has_id = message.contains("id");
  if (has_id) {
    id = message["id"];
    if (!id.is_string() && !id.is_number_integer()) {
      return refuse(nullptr, "id must be a string or an integer");
    }
  }
  if (message.value("jsonrpc", Json()) != "2.0") return refuse(id, "jsonrpc must be \"2.0\"");
  Message m{MessageKind::kRequest, id, "", nullptr};
  if (!message.contains("method")) {
    if (!has_id || (!message.contains("result") && !message.contains("error"))) {
      return refuse(id, "a message needs a method, or an id with a result or an error");
    }
    m.kind = MessageKind::kResponse;
    return m;
  }
  if (!message["method"].is_string() || message["method"].get_ref<const std::string&>().empty()) {
    return refuse(id, "method must be a non-empty string");
  }
  m.method = message["method"].get<std::string>();
  if (message.contains("params")) {
    m.params = message["params"];
    if (!m.params.is_object()) return refuse(id, "params must be an object");
  }
  if (!has_id) m.kind = MessageKind::kNotification;
  return m;
}

Json ResultResponse(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json ErrorResponse(const Json& id, int code, std::string_view message, Json data) {
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

Json MakeNotification(std::string_view method, Json params) {
  Json n = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

Json ServerInfo() {
  return Json{{"name", "baton"},
              {"title", "baton — durable state for a team of coding agents"},
              {"version", BATON_VERSION}};
}

}  // namespace baton::mcp
