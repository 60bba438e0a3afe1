#include "cli/ticker.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace baton {

Ticker::Ticker(std::string what, bool enabled) : what_(std::move(what)) {
  if (!enabled || isatty(STDERR_FILENO) == 0) return;
  thread_ = std::thread([this] {
    const auto start = std::chrono::steady_clock::now();
    MutexLock lock(&mu_);
    if (WaitDone(std::chrono::seconds(2))) return;
    auto seconds = [&] {
      return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                              start)
          .count();
    };
    do {
      std::cerr << "\rbaton: " << what_ << "... " << seconds() << " s" << std::flush;
    } while (!WaitDone(std::chrono::seconds(1)));
    std::cerr << "\rbaton: " << what_ << ": done in " << seconds() << " s\n" << std::flush;
  });
}

bool Ticker::WaitDone(std::chrono::seconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done_ && cv_.WaitUntil(&mu_, until)) {
  }
  return done_;
}

Ticker::~Ticker() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    done_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

std::string Ticker::Describe(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return path;
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return std::filesystem::path(path).filename().string() + " (" + size + ")";
}

}  // namespace baton
