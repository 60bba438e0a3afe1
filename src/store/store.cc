#include "store/store.h"

#include <cstdio>

#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"

namespace baton {

std::string Row::Str(size_t i) const {
  const SqlValue& v = values_[i];
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* n = std::get_if<int64_t>(&v)) return std::to_string(*n);
  if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  return "";
}

std::string Row::Take(size_t i) {
  if (auto* s = std::get_if<std::string>(&values_[i])) return std::move(*s);
  return Str(i);
}

int64_t Row::Int(size_t i) const {
  const SqlValue& v = values_[i];
  if (const auto* n = std::get_if<int64_t>(&v)) return *n;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  if (const auto* s = std::get_if<std::string>(&v)) {
    return std::strtoll(s->c_str(), nullptr, 10);
  }
  return 0;
}

double Row::Real(size_t i) const {
  const SqlValue& v = values_[i];
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* n = std::get_if<int64_t>(&v)) return static_cast<double>(*n);
  return 0;
}

Result<Row> Txn::QueryOne(std::string_view sql,
                          std::initializer_list<SqlValue> params,
                          std::string_view what) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, Query(sql, params));
  if (rows.empty()) return NotFoundError(std::string(what));
  return std::move(rows.front());
}

std::string_view DurabilityName(Durability d) {
  switch (d) {
    case Durability::kFull:
      return "full";
    case Durability::kNormal:
      return "normal";
    case Durability::kOff:
      return "off";
  }
  return "full";
}

Result<Durability> ParseDurability(std::string_view name) {
  if (name == "full") return Durability::kFull;
  if (name == "normal") return Durability::kNormal;
  if (name == "off") return Durability::kOff;
  return InvalidArgumentError("durability: must be one of full, normal, off (got \"" +
                              std::string(name) + "\")");
}

namespace {

// The lead of a store no other process can open (in memory).
class OwnLead final : public Lead {
 public:
  Result<bool> Hold() override { return true; }
};

}  // namespace

Result<std::unique_ptr<Lead>> Store::OpenLead() { return std::unique_ptr<Lead>(new OwnLead()); }

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (IsPostgresLocation(options.location)) return OpenPostgresStore(options);
  return OpenSqliteStore(options);
}

}  // namespace baton
