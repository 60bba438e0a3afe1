#include "ops/registry.h"

#include <algorithm>
#include <set>

#include "model/json_schema.h"

namespace baton {
namespace {

const Json& IdempotencyKeySchema() {
  static const Json* const kSchema = new Json{
      {"type", "string"},
      {"minLength", 1},
      {"maxLength", 200},
      {"description",
       "a key of your choosing; a retry with the same key returns the first "
       "result and changes nothing"}};
  return *kSchema;
}

const Json& ExpectVersionSchema() {
  static const Json* const kSchema = new Json{
      {"type", "integer"},
      {"minimum", 1},
      {"description",
       "the version you read; the call fails with Aborted if the row has "
       "moved since"}};
  return *kSchema;
}

// The largest integer every JSON reader holds exactly (2^53 - 1).
constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;

bool NamesInteger(const Json& type) {
  if (type.is_string()) return type == "integer";
  return type.is_array() && std::find(type.begin(), type.end(), "integer") != type.end();
}

// Gives every integer in "schema" a range: one the operation states, or
// +-(2^53 - 1), so that no input (2^63, 1e300) reaches a handler that would
// wrap it into another number.
void BoundIntegers(Json& schema) {
  if (!schema.is_object()) return;
  if (schema.contains("type") && NamesInteger(schema["type"])) {
    if (!schema.contains("minimum") && !schema.contains("exclusiveMinimum")) {
      schema["minimum"] = -kMaxSafeInteger;
    }
    if (!schema.contains("maximum") && !schema.contains("exclusiveMaximum")) {
      schema["maximum"] = kMaxSafeInteger;
    }
  }
  for (const char* key : {"properties", "patternProperties", "$defs", "definitions"}) {
    if (schema.contains(key) && schema[key].is_object()) {
      for (auto& [name, sub] : schema[key].items()) BoundIntegers(sub);
    }
  }
  for (const char* key : {"items", "additionalProperties", "not", "if", "then", "else"}) {
    if (schema.contains(key)) BoundIntegers(schema[key]);
  }
  for (const char* key : {"anyOf", "oneOf", "allOf", "prefixItems"}) {
    if (schema.contains(key) && schema[key].is_array()) {
      for (Json& sub : schema[key]) BoundIntegers(sub);
    }
  }
}

}  // namespace

Status Registry::Add(Operation op) {
  const std::string where = "operation " + op.name;
  if (op.name.find('.') == std::string::npos) {
    return InvalidArgumentError(where + ": name must be group.verb");
  }
  if (!op.handler == !op.procedure) {
    return InvalidArgumentError(where + ": needs exactly one of handler and procedure");
  }
  // A procedure's changes are the operations it calls; a key on the
  // procedure itself would be accepted and silently ignored.
  if (op.mutating && !op.procedure) {
    op.input_schema["properties"]["idempotency_key"] = IdempotencyKeySchema();
    if (op.versioned) {
      op.input_schema["properties"]["expect_version"] = ExpectVersionSchema();
    }
  }
  BoundIntegers(op.input_schema);
  RETURN_IF_ERROR(CheckSchema(op.input_schema).WithPrefix(where + ": input schema"));
  RETURN_IF_ERROR(CheckSchema(op.output_schema).WithPrefix(where + ": output schema"));
  auto [it, inserted] = ops_.emplace(op.name, std::move(op));
  if (!inserted) return AlreadyExistsError(where + " is defined twice");
  return Status();
}

void Registry::AddFamily(OpFamily family) {
  MutexLock lock(&mu_);
  pending_.push_back(std::move(family));
  complete_.store(false, std::memory_order_relaxed);
}

void Registry::AddFamilies(std::string_view group, std::string_view name) const {
  for (size_t i = 0; i < pending_.size();) {
    if (!name.empty() && ops_.find(name) != ops_.end()) break;
    const std::vector<std::string>& groups = pending_[i].groups;
    if (!group.empty() && std::find(groups.begin(), groups.end(), group) == groups.end()) {
      ++i;
      continue;
    }
    OpFamily family = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
    // Families add to ops_ only here, under mu_; hooks were added before.
    Status added = family.add(const_cast<Registry&>(*this));
    if (!added.ok() && family_error_.ok()) family_error_ = added;
  }
  if (pending_.empty()) complete_.store(true, std::memory_order_release);
}

const Operation* Registry::Find(std::string_view name) const {
  if (!complete_.load(std::memory_order_acquire)) {
    MutexLock lock(&mu_);
    AddFamilies(name.substr(0, name.find('.')), name);
    auto it = ops_.find(name);
    return it == ops_.end() ? nullptr : &it->second;
  }
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<const Operation*> Registry::All() const {
  (void)Complete();  // a family that failed is missing; Complete() says which
  std::vector<const Operation*> out;
  for (const auto& [name, op] : ops_) out.push_back(&op);
  return out;
}

std::vector<const Operation*> Registry::InGroup(std::string_view group) const {
  const std::string prefix = std::string(group) + ".";
  MutexLock lock(&mu_);
  AddFamilies(group);
  std::vector<const Operation*> out;
  for (auto it = ops_.lower_bound(prefix); it != ops_.end(); ++it) {
    if (!it->first.starts_with(prefix)) break;
    out.push_back(&it->second);
  }
  return out;
}

std::vector<std::string> Registry::Groups() const {
  MutexLock lock(&mu_);
  std::set<std::string> groups;
  for (const auto& [name, op] : ops_) groups.insert(name.substr(0, name.find('.')));
  for (const OpFamily& family : pending_) groups.insert(family.groups.begin(), family.groups.end());
  return {groups.begin(), groups.end()};
}

Status Registry::Complete() const {
  MutexLock lock(&mu_);
  AddFamilies("");
  return family_error_;
}

Json Registry::Describe(const Operation& op) {
  return Json{{"name", op.name},
              {"summary", op.summary},
              {"roles", op.roles.empty() ? Json::array({"any"}) : Json(op.roles)},
              {"mutating", op.mutating},
              {"annotations",
               {{"readOnlyHint", !op.mutating},
                {"destructiveHint", op.destructive},
                {"idempotentHint", op.idempotent || !op.mutating}}},
              {"input_schema", op.input_schema},
              {"output_schema", op.output_schema}};
}

Status CheckOpRole(const Operation& op, std::string_view role) {
  if (op.roles.empty() || role == "admin") return Status();
  if (std::find(op.roles.begin(), op.roles.end(), role) != op.roles.end()) {
    return Status();
  }
  std::string roles;
  for (const std::string& r : op.roles) roles += (roles.empty() ? "" : ", ") + r;
  return Status(StatusCode::kPermissionDenied,
                "operation " + op.name + " requires role " + roles +
                    " (caller's role: " + std::string(role) + ")",
                Json{{"operation", op.name}, {"roles", op.roles}, {"role", role}});
}

}  // namespace baton
