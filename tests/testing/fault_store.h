// File: fault_store.h
//
// A store that fails on purpose (issue 19; STYLE.md rules 3 and 15, after
// leveldb's fault_injection_test). FaultConnection wraps a real Connection
// and gives FaultTxns, which fail one chosen call of Savepoint, RollbackTo,
// Release or Commit the way a sick disk would:
//
//   * before the call: the real call is not made. For Commit this is a
//     COMMIT that failed cleanly; the wrapped Txn rolls back when the
//     caller drops it, as after any failed Commit.
//   * after the call ("apply_first"): the real call is made and succeeds,
//     then the fault is reported anyway. For Commit this is the in-doubt
//     commit — the WAL was written, its fsync failed —: the caller is told
//     it failed, and the change is there after a reopen.
//
// A Faults object holds the plan and counts calls; the test, the
// FaultConnection and every FaultTxn it begins share it, so the test keeps
// watching after the connection has moved into a Writer. Faults is
// thread-safe: the writer may run batches on its own thread.

#ifndef BATON_TESTS_FAULT_STORE_H_
#define BATON_TESTS_FAULT_STORE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "store/store_wrapper.h"
#include "util/json_util.h"

namespace baton::testing {

// The calls a plan can break.
enum class FaultOp { kSavepoint, kRollbackTo, kRelease, kCommit };
inline constexpr int kFaultOps = 4;
std::string_view FaultOpName(FaultOp op);

// One failure: the "nth" call of "op" after Faults::Arm returns the status
// made of "code", "message" and "details".
struct FaultPlan {
  FaultOp op = FaultOp::kCommit;
  int64_t nth = 1;  // 1: the next call
  // Make the real call first and fail only if it succeeded (see above).
  bool apply_first = false;
  StatusCode code = StatusCode::kInternal;
  std::string message = "injected fault: disk I/O error";
  Json details;

  Status status() const { return Status(code, message, details); }
};

class Faults {
 public:
  // Replaces any plan not yet fired; "plan.nth" counts from now. A plan
  // fires once and is then disarmed.
  void Arm(FaultPlan plan);
  void Disarm();

  // Counts a call of "op" (FaultTxn calls it before each one) and returns
  // the plan when this call is the one it names.
  std::optional<FaultPlan> Next(FaultOp op);

  // Calls of "op" since this object was made, and faults fired.
  int64_t calls(FaultOp op) const { return calls_[static_cast<int>(op)].load(); }
  int64_t injected() const { return injected_.load(); }

 private:
  std::array<std::atomic<int64_t>, kFaultOps> calls_{};
  std::atomic<int64_t> injected_{0};
  std::mutex mu_;
  std::optional<FaultPlan> plan_;  // GUARDED_BY(mu_)
  int64_t fire_at_ = 0;            // GUARDED_BY(mu_): the calls() value that fires
};

class FaultTxn final : public TxnWrapper {
 public:
  FaultTxn(std::unique_ptr<Txn> target, std::shared_ptr<Faults> faults)
      : TxnWrapper(std::move(target)), faults_(std::move(faults)) {}

  Status Savepoint(std::string_view name) override;
  Status RollbackTo(std::string_view name) override;
  Status Release(std::string_view name) override;
  Status Commit() override;

 private:
  // "real" unless the plan says otherwise.
  Status Run(FaultOp op, const std::function<Status()>& real);

  std::shared_ptr<Faults> faults_;
};

class FaultConnection final : public ConnectionWrapper {
 public:
  FaultConnection(std::unique_ptr<Connection> target, std::shared_ptr<Faults> faults)
      : ConnectionWrapper(std::move(target)), faults_(std::move(faults)) {}

  // The wrapped connection's Txn inside a FaultTxn.
  Result<std::unique_ptr<Txn>> Begin(TxnMode mode) override;

 private:
  std::shared_ptr<Faults> faults_;
};

// Every connection of the wrapped store is a FaultConnection: for an Api
// (ApiOptions::wrap_store), whose writer and readers all go through it.
class FaultStore final : public StoreWrapper {
 public:
  FaultStore(std::unique_ptr<Store> target, std::shared_ptr<Faults> faults)
      : StoreWrapper(std::move(target)), faults_(std::move(faults)) {}

  Result<std::unique_ptr<Connection>> Connect() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, StoreWrapper::Connect());
    return std::unique_ptr<Connection>(new FaultConnection(std::move(conn), faults_));
  }

 private:
  std::shared_ptr<Faults> faults_;
};

}  // namespace baton::testing

#endif  // BATON_TESTS_FAULT_STORE_H_
