// File: store_wrapper.h
//
// Forwarding implementations of the three classes of store.h, as leveldb's
// EnvWrapper is of Env (STYLE.md rule 3): each owns the object it wraps and
// passes every virtual call through to it unchanged, so a subclass overrides
// only what it changes — a test's fault injection (tests/testing/fault_store.h), a
// counter, a trace.
//
//   StoreWrapper       Connect() and info() go to the wrapped Store.
//   ConnectionWrapper  Begin() and file_path() go to the wrapped Connection;
//                      the Txn that Begin() gives is the wrapped one's, not
//                      wrapped again: a subclass that breaks transactions
//                      overrides Begin() to wrap it in its own TxnWrapper.
//   TxnWrapper         every statement, savepoint, Commit(),
//                      CheckStructure() and the dialect go to the wrapped Txn. Destroying the
//                      wrapper destroys the wrapped Txn, which rolls back
//                      unless it committed.
//   TxnWrappingStore   a StoreWrapper whose connections wrap each Txn they
//                      begin in a given TxnWrapper subclass.
//
// A wrapper adds no state and no locking: it is as thread-safe as what it
// wraps. Lifetimes are those of the unwrapped classes: a Txn, wrapped or
// not, must die before the Connection that began it.

#ifndef BATON_SRC_STORE_STORE_WRAPPER_H_
#define BATON_SRC_STORE_STORE_WRAPPER_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/store.h"

namespace baton {

class TxnWrapper : public Txn {
 public:
  // REQUIRES: "target" is not null.
  explicit TxnWrapper(std::unique_ptr<Txn> target) : target_(std::move(target)) {}

  // The braced-list convenience forms of Txn stay visible beside the
  // overrides below.
  using Txn::Exec;
  using Txn::ExecLater;
  using Txn::Query;

  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override {
    return target_->Query(sql, params);
  }
  Result<int64_t> Exec(std::string_view sql, SqlParams params) override {
    return target_->Exec(sql, params);
  }
  // Through this wrapper's Exec (a wrapper that counts or fails statements
  // sees this one too), unless a wrapper forwards it itself.
  Status ExecLater(std::string_view sql, SqlParams params) override {
    return Exec(sql, params).status();
  }
  Status Savepoint(std::string_view name) override { return target_->Savepoint(name); }
  Status RollbackTo(std::string_view name) override { return target_->RollbackTo(name); }
  Status Release(std::string_view name) override { return target_->Release(name); }
  Status Commit() override { return target_->Commit(); }
  Result<std::vector<std::string>> CheckStructure(bool thorough) override {
    return target_->CheckStructure(thorough);
  }
  std::string structure_check(bool thorough) const override {
    return target_->structure_check(thorough);
  }
  SqlDialect dialect() const override { return target_->dialect(); }

  Txn* target() const { return target_.get(); }

 private:
  std::unique_ptr<Txn> target_;
};

class ConnectionWrapper : public Connection {
 public:
  // REQUIRES: "target" is not null.
  explicit ConnectionWrapper(std::unique_ptr<Connection> target) : target_(std::move(target)) {}

  Result<std::unique_ptr<Txn>> Begin(TxnMode mode) override { return target_->Begin(mode); }
  std::string file_path() const override { return target_->file_path(); }

  Connection* target() const { return target_.get(); }

 private:
  std::unique_ptr<Connection> target_;
};

class StoreWrapper : public Store {
 public:
  // REQUIRES: "target" is not null.
  explicit StoreWrapper(std::unique_ptr<Store> target) : target_(std::move(target)) {}

  Result<std::unique_ptr<Connection>> Connect() override { return target_->Connect(); }
  StoreInfo info() const override { return target_->info(); }
  bool has_change_bell() const override { return target_->has_change_bell(); }
  Result<std::unique_ptr<ChangeBell>> OpenChangeBell() override {
    return target_->OpenChangeBell();
  }
  Result<std::unique_ptr<Lead>> OpenLead() override { return target_->OpenLead(); }

  Store* target() const { return target_.get(); }

 private:
  std::unique_ptr<Store> target_;
};

// A store whose every transaction, on every connection it gives, is
// wrapped in a "TxnT" made as TxnT(std::move(txn), shared) — a test's
// counter or statement log shared with the test: the Connection and Store
// halves of such a wrapper, written once. For an Api, through
// ApiOptions::wrap_store.
template <typename TxnT, typename Shared>
class TxnWrappingStore final : public StoreWrapper {
 public:
  TxnWrappingStore(std::unique_ptr<Store> target, std::shared_ptr<Shared> shared)
      : StoreWrapper(std::move(target)), shared_(std::move(shared)) {}

  Result<std::unique_ptr<Connection>> Connect() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, StoreWrapper::Connect());
    return std::unique_ptr<Connection>(new WrappingConnection(std::move(conn), shared_));
  }

 private:
  class WrappingConnection final : public ConnectionWrapper {
   public:
    WrappingConnection(std::unique_ptr<Connection> target, std::shared_ptr<Shared> shared)
        : ConnectionWrapper(std::move(target)), shared_(std::move(shared)) {}
    Result<std::unique_ptr<Txn>> Begin(TxnMode mode) override {
      ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, ConnectionWrapper::Begin(mode));
      return std::unique_ptr<Txn>(new TxnT(std::move(txn), shared_));
    }

   private:
    std::shared_ptr<Shared> shared_;
  };

  std::shared_ptr<Shared> shared_;
};

}  // namespace baton

#endif  // BATON_SRC_STORE_STORE_WRAPPER_H_
