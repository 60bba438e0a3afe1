#include "model/graph_delta.h"

#include <string>

namespace baton {
namespace {

// True when "longer" is an array that starts with every item of "prefix".
bool ExtendsArray(const Json& prefix, const Json& longer) {
  if (!prefix.is_array() || !longer.is_array() || longer.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (prefix[i] != longer[i]) return false;
  }
  return true;
}

}  // namespace

Json GraphStateDelta(const Json& before, const Json& after) {
  Json set = Json::object();
  Json append = Json::object();
  Json unset = Json::array();
  for (auto it = after.begin(); it != after.end(); ++it) {
    auto old = before.find(it.key());
    if (old == before.end()) {
      set[it.key()] = it.value();
    } else if (*old == it.value()) {
      continue;
    } else if (!old->empty() && ExtendsArray(*old, it.value())) {
      append[it.key()] = Json(it.value().begin() + static_cast<std::ptrdiff_t>(old->size()),
                              it.value().end());
    } else {
      set[it.key()] = it.value();
    }
  }
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (!after.contains(it.key())) unset.push_back(it.key());
  }
  Json delta = Json::object();
  if (!set.empty()) delta["set"] = std::move(set);
  if (!append.empty()) delta["append"] = std::move(append);
  if (!unset.empty()) delta["unset"] = std::move(unset);
  return delta;
}

Status ApplyGraphStateDelta(Json& state, const Json& delta) {
  if (!state.is_object() || !delta.is_object()) {
    return DataLossError("graph checkpoint: a state and its delta must be objects");
  }
  if (auto set = delta.find("set"); set != delta.end()) {
    if (!set->is_object()) return DataLossError("graph checkpoint: delta.set is not an object");
    for (auto it = set->begin(); it != set->end(); ++it) state[it.key()] = it.value();
  }
  if (auto append = delta.find("append"); append != delta.end()) {
    if (!append->is_object()) return DataLossError("graph checkpoint: delta.append is not an object");
    for (auto it = append->begin(); it != append->end(); ++it) {
      auto target = state.find(it.key());
      if (target == state.end() || !target->is_array() || !it.value().is_array()) {
        return DataLossError("graph checkpoint: delta.append." + it.key() +
                             ": the state holds no array there");
      }
      for (const Json& item : it.value()) target->push_back(item);
    }
  }
  if (auto unset = delta.find("unset"); unset != delta.end()) {
    if (!unset->is_array()) return DataLossError("graph checkpoint: delta.unset is not an array");
    for (const Json& key : *unset) {
      if (!key.is_string()) return DataLossError("graph checkpoint: delta.unset holds a non-string");
      state.erase(key.get<std::string>());
    }
  }
  return Status();
}

Json NodeOutcomeDelta(const std::string& result_key, const Json& result, const Json& updates,
                      const Json& removed, const Json& appended) {
  Json set = {{result_key, result}};
  for (auto it = updates.begin(); it != updates.end(); ++it) set[it.key()] = it.value();
  Json delta = {{"set", std::move(set)}};
  if (!removed.empty()) delta["unset"] = removed;
  if (!appended.empty()) delta["append"] = {{kGraphHistoryKey, appended}};
  return delta;
}

Status ApplyGraphDelta(Json& context, Json& history, const Json& delta) {
  Json state = std::move(context);
  state[kGraphHistoryKey] = std::move(history);
  Status applied = ApplyGraphStateDelta(state, delta);
  history = std::move(state[kGraphHistoryKey]);
  state.erase(kGraphHistoryKey);
  context = std::move(state);
  return applied;
}

bool GraphDeltaEmpty(const Json& delta) {
  return !delta.contains("set") && !delta.contains("append") && !delta.contains("unset");
}

}  // namespace baton
