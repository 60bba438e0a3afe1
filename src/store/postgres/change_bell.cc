#include "store/postgres/change_bell.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "store/postgres/libpq.h"

namespace baton {
namespace {

// The channel's two statements, each one literal: GCC 12 warns, wrongly, of
// a std::string made from a literal and a constant (-Warray-bounds).
constexpr char kListen[] = "LISTEN baton_change";
constexpr char kRing[] =
    "SELECT pg_notify('baton_change', coalesce((SELECT seq FROM ledger_head WHERE id = 1), "
    "0)::text)";

class PostgresChangeBell final : public ChangeBell {
 public:
  PostgresChangeBell(std::unique_ptr<PgSession> session, int wake_fd)
      : session_(std::move(session)),
        own_pid_(Pq().PQbackendPID(session_->raw())),
        wake_fd_(wake_fd) {}
  ~PostgresChangeBell() override { ::close(wake_fd_); }

  Status Ring() override {
    // The head as it is now: every commit up to it is visible to whoever
    // hears the ring and reads.
    return session_->Simple(kRing).status();
  }

  Result<std::vector<int64_t>> Listen(int timeout_ms) override {
    // Notifications that came in with a ring's answer wait in libpq's queue.
    std::vector<int64_t> heard = Drain();
    if (!heard.empty()) return heard;
    pollfd fds[2] = {{Pq().PQsocket(session_->raw()), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, std::max(0, timeout_ms));
    if (n < 0 && errno != EINTR) {
      return UnavailableError(std::string("waiting for other servers' commits: ") +
                              std::strerror(errno));
    }
    if (n > 0 && (fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      (void)::read(wake_fd_, &count, sizeof(count));
    }
    if (n > 0 && fds[0].revents != 0 && Pq().PQconsumeInput(session_->raw()) == 0) {
      return Status(StatusCode::kUnavailable,
                    std::string("the connection that hears other servers' commits was lost: ") +
                        Pq().PQerrorMessage(session_->raw()),
                    nlohmann::json{{"reason", kStoreDisconnectedReason}});
    }
    return Drain();
  }

  void Interrupt() override {
    const uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof(one));
  }

 private:
  std::vector<int64_t> Drain() {
    std::vector<int64_t> heard;
    while (PGnotify* note = Pq().PQnotifies(session_->raw())) {
      if (note->be_pid != own_pid_) heard.push_back(std::strtoll(note->extra, nullptr, 10));
      Pq().PQfreemem(note);
    }
    return heard;
  }

  std::unique_ptr<PgSession> session_;
  const int own_pid_;
  const int wake_fd_;
};

}  // namespace

Result<std::unique_ptr<ChangeBell>> OpenPostgresChangeBell(std::unique_ptr<PgSession> session) {
  RETURN_IF_ERROR(session->Simple(kListen).status());
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    return UnavailableError(std::string("eventfd for the change bell: ") + std::strerror(errno));
  }
  return std::unique_ptr<ChangeBell>(new PostgresChangeBell(std::move(session), wake_fd));
}

}  // namespace baton
