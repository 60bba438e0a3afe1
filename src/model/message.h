// File: message.h
//
// One row of the messages table, typed: a mailbox message to one recipient,
// with its read and push-delivery state (engine/coord/mail.h).
// store/tables/message_table.h reads it; MessageToJson gives the shape every
// mail operation returns. JSON remains only where the row holds JSON: "meta".

#ifndef BATON_SRC_MODEL_MESSAGE_H_
#define BATON_SRC_MODEL_MESSAGE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Message {
  std::string id;
  int64_t seq = 0;
  std::string sender;
  std::string recipient;
  std::string addressed_to;  // the address it was sent to ("role:reviewer", "*", ...)
  std::string body;
  std::string source = "agent";  // where it came from: agent, human, system, import, ...
  Json meta = Json::object();
  std::optional<std::string> run_id;
  std::optional<std::string> project_id;
  bool read = false;
  std::optional<std::string> read_at;
  std::optional<std::string> read_by;
  std::string delivery_status = "pending";
  int64_t delivery_attempts = 0;
  std::optional<std::string> delivered_at;
  std::optional<std::string> last_error;
  int64_t next_attempt_ms = 0;  // 0: no attempt scheduled
  std::string created_at;
};

// {id, seq, from, to, addressed_to, body, source, meta, run_id, project_id,
// read, read_at, read_by, delivery_status, delivery_attempts, delivered_at,
// last_error, next_attempt_at: RFC 3339 | null, created_at}.
Json MessageToJson(const Message& message);

}  // namespace baton

#endif  // BATON_SRC_MODEL_MESSAGE_H_
