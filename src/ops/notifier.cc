#include "ops/notifier.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "engine/inbox/inbox.h"
#include "util/clock.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

constexpr int64_t kQuietMillis = 250;  // changes closer together are one look

// Our environment with the item's variables set (replacing any of ours).
std::vector<std::string> ItemEnvironment(const InboxItem& item, const std::string& url) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"BATON_ITEM_ID", item.id},
      {"BATON_ITEM_KIND", item.kind},
      {"BATON_ITEM_TITLE", item.title},
      {"BATON_ITEM_FROM", item.from},
      {"BATON_RUN_ID", item.run ? item.run->id : ""},
      {"BATON_DASHBOARD_URL", url}};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : vars) replaced = replaced || entry.rfind(name + "=", 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

}  // namespace

Notifier::Notifier(Api& api, NotifierOptions options) : api_(api), options_(std::move(options)) {
  // What waits already is the human's to see on the page, not news.
  Result<Json> now = api_.Call("inbox.list", Json::object(), SystemActor());
  if (now.ok()) {
    for (const Json& listed : (*now)["items"]) seen_.insert(listed.at("id").get<std::string>());
  }
  thread_ = std::thread([this] { Loop(); });
}

Notifier::~Notifier() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

bool Notifier::Sleep(int64_t ms) {
  MutexLock lock(&mu_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop_ && cv_.WaitUntil(&mu_, until)) {
  }
  return !stop_;
}

void Notifier::Loop() {
  uint64_t seen_changes = 0;
  for (;;) {
    api_.WaitForChange(&seen_changes, NowMillis() + 1000);
    if (!Sleep(kQuietMillis)) return;
    // Several servers on one store: only the lead's announces (store.h
    // Lead); the others note what is new without a word, so that one
    // taking the lead later does not announce it again.
    const Result<bool> leads = api_.HoldLead();
    const bool announce = leads.ok() && *leads;
    Result<Json> inbox = api_.Call("inbox.list", Json::object(), SystemActor());
    if (!inbox.ok()) continue;
    for (const Json& listed : (*inbox)["items"]) {
      if (!seen_.insert(listed.at("id").get<std::string>()).second) continue;
      if (!announce) continue;
      Announce(InboxItemFromJson(listed));
      MutexLock lock(&mu_);
      if (stop_) return;
    }
  }
}

void Notifier::Announce(const InboxItem& item) {
  std::string error;
  int attempt = 0;
  int exit_code = -1;
  for (int64_t wait = options_.first_retry_ms; attempt < options_.max_attempts; wait *= 2) {
    if (attempt > 0 && !Sleep(wait)) break;
    ++attempt;
    Result<SubprocessResult> r =
        RunSubprocess({.argv = {"/bin/sh", "-c", options_.command},
                       .env = ItemEnvironment(item, options_.dashboard_url),
                       .stdin_text = DumpJson(InboxItemToJson(item)) + "\n",
                       .timeout_ms = options_.timeout_ms});
    if (r.ok() && r->exit_code == 0) {
      error.clear();
      exit_code = 0;
      break;
    }
    exit_code = r.ok() ? r->exit_code : -1;
    error = r.ok() ? "exit " + std::to_string(r->exit_code) + ": " + r->err.substr(0, 300)
                   : r.status().ToString();
  }
  Json outcome = {{"item", item.id},
                  {"title", item.title},
                  {"outcome", error.empty() ? "sent" : "failed"},
                  {"attempts", attempt},
                  {"exit_code", exit_code},
                  {"error", error}};
  if (item.run) outcome["run"] = item.run->id;
  Result<Json> recorded = api_.Call("inbox.notified", outcome, SystemActor());
  if (!recorded.ok()) {
    std::fprintf(stderr, "baton serve: notify: %s\n", recorded.status().ToString().c_str());
  }
}

}  // namespace baton
