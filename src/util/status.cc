#include "baton/status.h"

#include "baton/error_table.h"

namespace baton {
namespace {

// The table behind ErrorTable(). Exit code 2 is shared by InvalidArgument and
// command-line usage errors, as most Unix tools do: both mean "fix the input".
constexpr ErrorMapping kTable[] = {
    {StatusCode::kOk, "OK", 0, 200, 0, "nothing to do"},
    {StatusCode::kInvalidArgument, "InvalidArgument", 2, 400, -32602,
     "fix the input named in the message"},
    {StatusCode::kNotFound, "NotFound", 3, 404, -32004,
     "check the id; the thing does not exist"},
    {StatusCode::kAlreadyExists, "AlreadyExists", 4, 409, -32005,
     "use the existing one or pick another id"},
    {StatusCode::kFailedPrecondition, "FailedPrecondition", 5, 409, -32006,
     "do not retry until the state changes"},
    {StatusCode::kAborted, "Aborted", 6, 409, -32007,
     "re-read and retry the whole read-modify-write"},
    {StatusCode::kUnavailable, "Unavailable", 7, 503, -32008,
     "retry the same call later"},
    {StatusCode::kPermissionDenied, "PermissionDenied", 8, 403, -32009,
     "the caller's role may not do this"},
    {StatusCode::kUnauthenticated, "Unauthenticated", 9, 401, -32010,
     "present valid credentials"},
    {StatusCode::kResourceExhausted, "ResourceExhausted", 10, 429, -32011,
     "reduce the size or rate"},
    {StatusCode::kDeadlineExceeded, "DeadlineExceeded", 11, 504, -32012,
     "the wait ran out; call again to keep waiting"},
    {StatusCode::kDataLoss, "DataLoss", 12, 500, -32013,
     "stored data is corrupt; run baton verify"},
    {StatusCode::kInternal, "Internal", 13, 500, -32603, "a bug in baton"},
    {StatusCode::kUnknown, "Unknown", 14, 500, -32014,
     "the change may or may not have been made: read it back before retrying"},
};

const std::string& EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

const nlohmann::json& NullJson() {
  static const nlohmann::json* const kNull = new nlohmann::json();
  return *kNull;
}

}  // namespace

std::span<const ErrorMapping> ErrorTable() { return kTable; }

const ErrorMapping& MappingFor(StatusCode code) {
  const auto index = static_cast<size_t>(code);
  // The table is in enum order; a mismatch means a code was added without a row.
  assert(index < std::size(kTable) && kTable[index].code == code);
  return kTable[index];
}

int HttpStatusFor(const Status& status) {
  const nlohmann::json& details = status.details();
  if (status.code() == StatusCode::kResourceExhausted && details.is_object() &&
      details.value("reason", "") == kStorageFull) {
    return 507;
  }
  return MappingFor(status.code()).http_status;
}

std::string_view StatusCodeName(StatusCode code) {
  return MappingFor(code).name;
}

std::optional<StatusCode> ParseStatusCode(std::string_view name) {
  for (const ErrorMapping& m : kTable) {
    if (name == m.name) return m.code;
  }
  return std::nullopt;
}

Status::Status(StatusCode code, std::string message, nlohmann::json details) {
  if (code == StatusCode::kOk) return;
  rep_ = std::make_shared<const Rep>(
      Rep{code, std::move(message), std::move(details)});
}

const std::string& Status::message() const {
  return ok() ? EmptyString() : rep_->message;
}

const nlohmann::json& Status::details() const {
  return ok() ? NullJson() : rep_->details;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code())) + ": " + rep_->message;
}

nlohmann::json Status::ToJson() const {
  nlohmann::json j = {{"code", std::string(StatusCodeName(code()))},
                      {"message", message()}};
  if (!details().is_null()) j["details"] = details();
  return j;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code(), std::string(prefix) + ": " + rep_->message,
                rep_->details);
}

Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
Status NotFoundError(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
Status AlreadyExistsError(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
Status AbortedError(std::string m) {
  return Status(StatusCode::kAborted, std::move(m));
}
Status UnavailableError(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
Status PermissionDeniedError(std::string m) {
  return Status(StatusCode::kPermissionDenied, std::move(m));
}
Status UnauthenticatedError(std::string m) {
  return Status(StatusCode::kUnauthenticated, std::move(m));
}
Status ResourceExhaustedError(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
Status DeadlineExceededError(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
Status DataLossError(std::string m) {
  return Status(StatusCode::kDataLoss, std::move(m));
}
Status InternalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

}  // namespace baton
