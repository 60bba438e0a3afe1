// File: ticker.h
//
// On a terminal, work that reports nothing while it runs (an import of a
// large file, an export) says that it is still going: after two seconds a
// line "baton: importing state.json (19.0 MB)... 5 s", rewritten each
// second, and the total when it ends. Silent off a terminal and with
// --output json, where a script reads the output.

#ifndef BATON_SRC_CLI_TICKER_H_
#define BATON_SRC_CLI_TICKER_H_

#include <chrono>
#include <string>
#include <thread>

#include "util/mutex.h"

namespace baton {

class Ticker {
 public:
  // "what" names the work ("importing state.json (19.0 MB)"); nothing is
  // shown unless "enabled" and standard error is a terminal.
  Ticker(std::string what, bool enabled);
  ~Ticker();
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // "state.json (19.0 MB)": a file's name and size, for "what".
  static std::string Describe(const std::string& path);

 private:
  std::string what_;
  // Waits up to "timeout" for the destructor; true once it came.
  bool WaitDone(std::chrono::seconds timeout) REQUIRES(mu_);

  Mutex mu_;
  CondVar cv_;
  bool done_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace baton

#endif  // BATON_SRC_CLI_TICKER_H_
