#include "fault_store.h"

#include <utility>

namespace baton::testing {

std::string_view FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kSavepoint:
      return "Savepoint";
    case FaultOp::kRollbackTo:
      return "RollbackTo";
    case FaultOp::kRelease:
      return "Release";
    case FaultOp::kCommit:
      return "Commit";
  }
  return "?";
}

void Faults::Arm(FaultPlan plan) {
  std::lock_guard<std::mutex> lock(mu_);
  fire_at_ = calls(plan.op) + plan.nth;
  plan_ = std::move(plan);
}

void Faults::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  plan_.reset();
}

std::optional<FaultPlan> Faults::Next(FaultOp op) {
  // Counted outside the lock so calls() never waits; Arm reads the count
  // under the lock, and Next compares under it, so a plan armed between
  // two calls fires on the right one.
  const int64_t n = ++calls_[static_cast<int>(op)];
  std::lock_guard<std::mutex> lock(mu_);
  if (!plan_ || plan_->op != op || n != fire_at_) return std::nullopt;
  std::optional<FaultPlan> fired = std::move(plan_);
  plan_.reset();
  ++injected_;
  return fired;
}

Status FaultTxn::Run(FaultOp op, const std::function<Status()>& real) {
  std::optional<FaultPlan> fault = faults_->Next(op);
  if (!fault) return real();
  if (fault->apply_first) {
    // A real failure wins: the store itself already said no.
    Status applied = real();
    if (!applied.ok()) return applied;
  }
  return fault->status();
}

Status FaultTxn::Savepoint(std::string_view name) {
  return Run(FaultOp::kSavepoint, [&] { return TxnWrapper::Savepoint(name); });
}

Status FaultTxn::RollbackTo(std::string_view name) {
  return Run(FaultOp::kRollbackTo, [&] { return TxnWrapper::RollbackTo(name); });
}

Status FaultTxn::Release(std::string_view name) {
  return Run(FaultOp::kRelease, [&] { return TxnWrapper::Release(name); });
}

Status FaultTxn::Commit() {
  return Run(FaultOp::kCommit, [&] { return TxnWrapper::Commit(); });
}

Result<std::unique_ptr<Txn>> FaultConnection::Begin(TxnMode mode) {
  ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, ConnectionWrapper::Begin(mode));
  return std::unique_ptr<Txn>(new FaultTxn(std::move(txn), faults_));
}

}  // namespace baton::testing
