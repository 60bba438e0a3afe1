// File: status.h
//
// Status and Result<T>: how every expected failure in baton travels. The codes
// are abseil's canonical set, trimmed to the ones baton uses (DESIGN.md §9).
// The code tells the caller what to do next:
//   kUnavailable         retry the same call (busy store, server going down);
//   kAborted             redo the whole read-modify-write (version moved, lease lost);
//   kFailedPrecondition  do not retry until the state changes (illegal transition,
//                        gate not met);
//   kInvalidArgument     fix the input (the message names the field and the rule).
//
// A Status may carry "details": a JSON object with structured facts for callers
// that are programs (for a refused transition: machine, current, requested and
// allowed). Status is cheap to copy; OK holds no allocation. Thread-compatible.
//
// Example:
//   Result<Run> run = engine.GetRun(id);
//   if (!run.ok()) return run.status();
//   ASSIGN_OR_RETURN(Run r, engine.GetRun(id));

#ifndef BATON_INCLUDE_BATON_STATUS_H_
#define BATON_INCLUDE_BATON_STATUS_H_

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace baton {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kAborted,
  kUnavailable,
  kPermissionDenied,
  kUnauthenticated,
  kResourceExhausted,
  kDeadlineExceeded,
  kDataLoss,
  kInternal,
  // The outcome is not known: a commit that failed may have reached the
  // disk all the same. Never retried blindly (STYLE.md rule 9).
  kUnknown,
};

// Every code, in enum order; tests walk it to check that each table is complete.
inline constexpr StatusCode kAllStatusCodes[] = {
    StatusCode::kOk,
    StatusCode::kInvalidArgument,
    StatusCode::kNotFound,
    StatusCode::kAlreadyExists,
    StatusCode::kFailedPrecondition,
    StatusCode::kAborted,
    StatusCode::kUnavailable,
    StatusCode::kPermissionDenied,
    StatusCode::kUnauthenticated,
    StatusCode::kResourceExhausted,
    StatusCode::kDeadlineExceeded,
    StatusCode::kDataLoss,
    StatusCode::kInternal,
    StatusCode::kUnknown,
};

// "InvalidArgument", "NotFound", ... (abseil's names without the k).
std::string_view StatusCodeName(StatusCode code);
// Inverse of StatusCodeName; nullopt for an unknown name.
std::optional<StatusCode> ParseStatusCode(std::string_view name);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message,
         nlohmann::json details = nlohmann::json());

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : rep_->code; }
  const std::string& message() const;
  // A JSON object, or null when there are no details.
  const nlohmann::json& details() const;

  // "FailedPrecondition: illegal transition ..." or "OK".
  std::string ToString() const;
  // {"code": "...", "message": "...", "details": {...}} (details only if set).
  nlohmann::json ToJson() const;

  // Returns a copy whose message is "prefix: message"; OK stays OK.
  Status WithPrefix(std::string_view prefix) const;

 private:
  struct Rep {
    StatusCode code;
    std::string message;
    nlohmann::json details;
  };
  std::shared_ptr<const Rep> rep_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status AbortedError(std::string message);
Status UnavailableError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnauthenticatedError(std::string message);
Status ResourceExhaustedError(std::string message);
Status DeadlineExceededError(std::string message);
Status DataLossError(std::string message);
Status InternalError(std::string message);

// Result<T> holds either a T or a non-OK Status (abseil's StatusOr).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    // An OK status carries no value: that is a programming error in the callee.
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok()
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace baton

#define BATON_STATUS_CONCAT_INNER_(a, b) a##b
#define BATON_STATUS_CONCAT_(a, b) BATON_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function when "expr" (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::baton::Status baton_status_ = (expr);   \
    if (!baton_status_.ok()) return baton_status_; \
  } while (0)

// Declares or assigns "lhs" from a Result<T> "rexpr", returning its status on error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(BATON_STATUS_CONCAT_(baton_result_, __LINE__), lhs, rexpr)
// "lhs" may be a declaration ("int v"), so it cannot be parenthesised.
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                           \
  if (!tmp.ok()) return tmp.status();           \
  lhs = std::move(tmp).value()  // NOLINT(bugprone-macro-parentheses)

#endif  // BATON_INCLUDE_BATON_STATUS_H_
