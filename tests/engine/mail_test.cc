// The mailbox, push delivery and chat through Api::Call, on every store
// backend; concurrency and tmux delivery on a file store.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "backend_test.h"
#include "test_util.h"
#include "util/clock.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "a" holding every grant: setting and running delivery commands needs
// "commands" (docs/security-paths.md).
using testing::Granted;

// Single-quoted for /bin/sh.
std::string Quote(const std::string& s) { return "'" + s + "'"; }

Json Kinds(Api& api, const std::string& kind) {
  return MustCall(api, "ledger.events", {{"kind", kind}})["events"];
}

class MailTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    api_ = OpenBackend();
    Register("coder", {{"role", "coder"}, {"team", "alpha"}});
    Register("coder2", {{"role", "coder"}, {"team", "alpha"}});
    Register("reviewer", {{"role", "reviewer"}, {"team", "beta"}});
  }

  void Register(const std::string& id, Json fields) {
    fields["id"] = id;
    MustCall(*api_, "agent.register", fields, Granted(Human()));
  }

  Json Send(const std::string& to, const std::string& body, const Actor& from = Human()) {
    return MustCall(*api_, "mail.send", {{"to", to}, {"body", body}}, from)["messages"];
  }

  Json Peek(const std::string& agent) {
    return MustCall(*api_, "mail.peek", {{"agent", agent}, {"limit", 1000}})["messages"];
  }

  size_t AllMessages() {
    size_t n = 0;
    for (const char* a : {"coder", "coder2", "reviewer"}) n += Peek(a).size();
    return n;
  }

  Json Deliver(Json in = Json::object()) {
    return MustCall(*api_, "mail.deliver", in, Granted(Coordinator()));
  }

  void ExpectRefused(const std::string& op, const Json& input, StatusCode code,
                     const Actor& actor = Human()) {
    (void)Refused(op, input, code, actor);
  }

  // Calls "op" expecting "code"; checks the ledger and the messages did not change.
  Status Refused(const std::string& op, const Json& input, StatusCode code,
                 const Actor& actor = Human()) {
    const size_t messages = AllMessages();
    Status s = testing::Refused(*api_, op, input, code, actor);
    EXPECT_EQ(AllMessages(), messages) << op << " " << input.dump() << " wrote messages";
    return s;
  }

  std::unique_ptr<Api> api_;
};

TEST_P(MailTest, SendToOneAgentStoresItPendingWithOneEvent) {
  const int64_t before = LedgerLength(*api_);
  Json sent = Send("coder", "please review");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["to"], "coder");
  EXPECT_EQ(sent[0]["from"], "alice");
  EXPECT_EQ(sent[0]["addressed_to"], "coder");
  EXPECT_EQ(sent[0]["delivery_status"], "pending");
  EXPECT_EQ(sent[0]["read"], false);
  EXPECT_EQ(LedgerLength(*api_), before + 1);
  Json events = Kinds(*api_, "message.sent");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["message"], sent[0]["id"]);
  EXPECT_EQ(Peek("coder").size(), 1u);
  EXPECT_EQ(Peek("coder2").size(), 0u);
}

TEST_P(MailTest, GroupAddressesFanOutOneRowPerRecipient) {
  const struct {
    std::string to;
    Actor from;
    std::set<std::string> recipients;
  } cases[] = {{"role:coder", Human(), {"coder", "coder2"}},
               {"team:alpha", Human(), {"coder", "coder2"}},
               {"team:beta", Human(), {"reviewer"}},
               {"*", Agent("coder"), {"coder2", "reviewer"}}};
  for (const auto& c : cases) {
    const size_t events = Kinds(*api_, "message.sent").size();
    Json sent = Send(c.to, "hello " + c.to, c.from);
    std::set<std::string> got, ids;
    for (const Json& m : sent) {
      got.insert(m["to"].get<std::string>());
      ids.insert(m["id"].get<std::string>());
      EXPECT_EQ(m["addressed_to"], c.to);
    }
    EXPECT_EQ(got, c.recipients) << c.to;
    EXPECT_EQ(ids.size(), sent.size()) << c.to << ": ids must differ";
    EXPECT_EQ(Kinds(*api_, "message.sent").size(), events + sent.size()) << c.to;
  }
  // Each copy has its own read state.
  MustCall(*api_, "mail.inbox", Json::object(), Agent("coder"));
  for (const Json& m : Peek("coder2")) EXPECT_EQ(m["read"], false);
}

TEST_P(MailTest, UnknownRecipientIsRefusedAndNothingIsWritten) {
  Send("coder", "one message so the counts are not trivially zero");
  const struct {
    const char* to;
    StatusCode code;
    const char* names;
  } cases[] = {{"ghost", StatusCode::kNotFound, "no agent \"ghost\" is registered"},
               {"role:ghost", StatusCode::kNotFound, "role \"ghost\""},
               {"team:ghost", StatusCode::kNotFound, "team \"ghost\""},
               {"role:", StatusCode::kInvalidArgument, "needs a role name"}};
  for (const auto& c : cases) {
    Status s = Refused("mail.send", {{"to", c.to}, {"body", "x"}}, c.code);
    EXPECT_EQ(s.message().rfind("to: ", 0), 0u) << c.to << ": " << s.message();
    EXPECT_NE(s.message().find(c.names), std::string::npos) << c.to << ": " << s.message();
  }
  ExpectRefused("mail.send", {{"to", "coder"}, {"body", ""}}, StatusCode::kInvalidArgument);
  ExpectRefused("mail.send", {{"to", "coder"}, {"body", std::string(100001, 'x')}},
                StatusCode::kInvalidArgument);
  Status s = Refused("mail.send", {{"to", "coder"}, {"body", "x"}, {"from", "reviewer"}},
                     StatusCode::kPermissionDenied, Agent("coder2"));
  EXPECT_EQ(s.message().rfind("from: ", 0), 0u) << s.message();
}

TEST(MailSendTest, EveryoneButASoleSenderIsNobody) {
  auto api = testing::OpenApi(":memory:");
  MustCall(*api, "agent.register", {{"id", "alone"}});
  Result<Json> r = api->Call("mail.send", {{"to", "*"}, {"body", "x"}}, Agent("alone"));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
}

TEST_P(MailTest, InboxMarksReadOnceWithReaderAndTime) {
  Send("coder", "first");
  Send("coder", "second");
  Json inbox = MustCall(*api_, "mail.inbox", Json::object(), Agent("coder"));
  ASSERT_EQ(inbox["messages"].size(), 2u);
  EXPECT_EQ(inbox["messages"][0]["body"], "first");  // oldest first
  EXPECT_EQ(inbox["marked_read"].size(), 2u);
  for (const Json& m : Peek("coder")) {
    EXPECT_EQ(m["read"], true);
    EXPECT_EQ(m["read_by"], "coder");
    EXPECT_TRUE(m["read_at"].is_string());
  }
  Json events = Kinds(*api_, "message.read");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["messages"].size(), 2u);
  Json again = MustCall(*api_, "mail.inbox", {{"unread_only", true}}, Agent("coder"));
  EXPECT_TRUE(again["messages"].empty());
  EXPECT_TRUE(again["marked_read"].empty());
  EXPECT_EQ(Kinds(*api_, "message.read").size(), 1u);
}

TEST_P(MailTest, InboxWithoutMarkReadLeavesMessagesUnread) {
  Send("coder", "hi");
  Json inbox = MustCall(*api_, "mail.inbox", {{"mark_read", false}}, Agent("coder"));
  ASSERT_EQ(inbox["messages"].size(), 1u);
  EXPECT_EQ(inbox["messages"][0]["read"], false);
  EXPECT_EQ(
      MustCall(*api_, "mail.inbox", {{"unread_only", true}}, Agent("coder"))["messages"].size(),
      1u);
}

TEST_P(MailTest, MailReadMarksOneAndOnlyOnce) {
  Json sent = Send("coder", "a");
  Send("coder", "b");
  Json read = MustCall(*api_, "mail.read", {{"id", sent[0]["id"]}}, Agent("coder"));
  EXPECT_EQ(read["read"], true);
  EXPECT_EQ(read["read_by"], "coder");
  const int64_t before = LedgerLength(*api_);
  MustCall(*api_, "mail.read", {{"id", sent[0]["id"]}}, Agent("coder"));
  EXPECT_EQ(LedgerLength(*api_), before) << "marking a read message again changed the ledger";
  EXPECT_EQ(
      MustCall(*api_, "mail.peek", {{"unread_only", true}}, Agent("coder"))["messages"].size(), 1u);
  ExpectRefused("mail.read", {{"id", "msg-nope"}}, StatusCode::kNotFound);
}

TEST_P(MailTest, AgentsReadOnlyTheirOwnMail) {
  Json sent = Send("reviewer", "private");
  Status s =
      Refused("mail.inbox", {{"agent", "reviewer"}}, StatusCode::kPermissionDenied, Agent("coder"));
  EXPECT_EQ(s.message().rfind("agent: ", 0), 0u) << s.message();
  ExpectRefused("mail.read", {{"id", sent[0]["id"]}}, StatusCode::kPermissionDenied,
                Agent("coder"));
  ExpectRefused("mail.inbox", {{"agent", "nobody"}}, StatusCode::kNotFound);
  // Coordinators and humans may read anyone's.
  EXPECT_EQ(MustCall(*api_, "mail.peek", {{"agent", "reviewer"}}, Coordinator())["messages"].size(),
            1u);
}

TEST_P(MailTest, OutboxShowsDeliveryState) {
  Send("role:coder", "status?", Agent("reviewer"));
  Json out = MustCall(*api_, "mail.outbox", Json::object(), Agent("reviewer"))["messages"];
  ASSERT_EQ(out.size(), 2u);
  for (const Json& m : out) {
    EXPECT_EQ(m["from"], "reviewer");
    EXPECT_EQ(m["delivery_status"], "pending");
    EXPECT_EQ(m["delivery_attempts"], 0);
    EXPECT_TRUE(m["delivered_at"].is_null());
    EXPECT_TRUE(m["last_error"].is_null());
  }
  EXPECT_TRUE(
      MustCall(*api_, "mail.outbox", {{"agent", "reviewer"}, {"status", "delivered"}})["messages"]
          .empty());
}

TEST_P(MailTest, ListsPageForwardFromSinceOrShowTheNewest) {
  for (int i = 1; i <= 5; ++i) Send("coder", "m" + std::to_string(i));
  auto bodies = [](const Json& list) {
    std::string out;
    for (const Json& m : list) out += m["body"].get<std::string>() + " ";
    return out;
  };
  Json all = Peek("coder");
  EXPECT_EQ(bodies(all), "m1 m2 m3 m4 m5 ");
  EXPECT_EQ(bodies(MustCall(*api_, "mail.peek", {{"agent", "coder"}, {"limit", 2}})["messages"]),
            "m4 m5 ");
  EXPECT_EQ(bodies(MustCall(*api_, "mail.peek",
                            {{"agent", "coder"}, {"limit", 2}, {"unread_only", true}})["messages"]),
            "m1 m2 ");
  EXPECT_EQ(
      bodies(MustCall(*api_, "mail.peek",
                      {{"agent", "coder"}, {"limit", 2}, {"since", all[1]["seq"]}})["messages"]),
      "m3 m4 ");
}

TEST_P(MailTest, WaitReturnsAMessageSentWhileWaitingWithoutMarkingIt) {
  std::thread sender([&] {
    EXPECT_TRUE(testing::Eventually([&] { return api_->waiters() > 0; }));  // wake a waiter
    Send("coder", "wake up");
  });
  const int64_t start = NowMillis();
  Json got = MustCall(*api_, "mail.wait", {{"timeout_ms", 20000}}, Agent("coder"));
  sender.join();
  EXPECT_LT(NowMillis() - start, 10000);
  EXPECT_EQ(got["timed_out"], false);
  ASSERT_EQ(got["messages"].size(), 1u);
  EXPECT_EQ(got["messages"][0]["body"], "wake up");
  EXPECT_EQ(Peek("coder")[0]["read"], false) << "mail.wait must not mark read";
}

TEST_P(MailTest, WaitTimesOutWhenNothingComes) {
  Send("coder2", "for someone else");
  const int64_t start = NowMillis();
  Json got = MustCall(*api_, "mail.wait", {{"timeout_ms", 300}}, Agent("coder"));
  EXPECT_GE(NowMillis() - start, 300);
  EXPECT_EQ(got["timed_out"], true);
  EXPECT_TRUE(got["messages"].empty());
}

TEST_P(MailTest, WaitSinceIgnoresOlderUnreadMessages) {
  Json old = Send("coder", "old");
  Json got =
      MustCall(*api_, "mail.wait", {{"timeout_ms", 200}, {"since", old[0]["seq"]}}, Agent("coder"));
  EXPECT_EQ(got["timed_out"], true);
}

// Delivery into a file: "printf body >> file" while the agent is idle.
class DeliveryTest : public MailTest {
 protected:
  void SetUp() override {
    MailTest::SetUp();
    out_ = dir_.File("pane.txt");
    Register("pusher",
             {{"role", "pushed"},
              {"status", "working"},
              {"delivery_command", "printf '%s|' \"$BATON_MESSAGE_BODY\" >> " + Quote(out_)}});
  }
  void SetStatus(const std::string& agent, const std::string& status) {
    MustCall(*api_, "agent.set_status", {{"id", agent}, {"status", status}});
  }
  std::string out_;
};

TEST_P(DeliveryTest, DeliversOnlyWhileTheAgentIsIdle) {
  Json sent = Send("pusher", "do the thing");
  const std::string id = sent[0]["id"];
  Json pass = Deliver();
  EXPECT_TRUE(pass["delivered"].empty());
  ASSERT_EQ(pass["skipped"].size(), 1u);
  EXPECT_EQ(pass["skipped"][0]["id"], id);
  EXPECT_NE(pass["skipped"][0]["reason"].get<std::string>().find("working"), std::string::npos);
  EXPECT_EQ(Peek("pusher")[0]["delivery_status"], "pending");
  EXPECT_EQ(Slurp(out_), "");

  SetStatus("pusher", "idle");
  pass = Deliver();
  EXPECT_EQ(pass["delivered"], Json::array({id}));
  EXPECT_EQ(Slurp(out_), "do the thing|");
  Json m = Peek("pusher")[0];
  EXPECT_EQ(m["delivery_status"], "delivered");
  EXPECT_EQ(m["delivery_attempts"], 1);
  EXPECT_TRUE(m["delivered_at"].is_string());
  EXPECT_EQ(Kinds(*api_, "message.delivered").size(), 1u);
  EXPECT_TRUE(Deliver()["delivered"].empty()) << "delivered twice";
  EXPECT_EQ(Slurp(out_), "do the thing|");
}

TEST_P(DeliveryTest, OneMessagePerAgentPerPassInOrder) {
  SetStatus("pusher", "idle");
  Send("pusher", "one");
  Send("pusher", "two");
  Json pass = Deliver();
  EXPECT_EQ(pass["delivered"].size(), 1u);
  EXPECT_EQ(pass["skipped"].size(), 1u);
  // The pushed message gave the agent work: it is no longer idle, and the
  // next message waits until it says it is idle again.
  EXPECT_EQ(MustCall(*api_, "agent.show", {{"id", "pusher"}})["status"], "working");
  EXPECT_EQ(Deliver()["delivered"].size(), 0u);
  EXPECT_EQ(Slurp(out_), "one|");
  SetStatus("pusher", "idle");
  EXPECT_EQ(Deliver()["delivered"].size(), 1u);
  EXPECT_EQ(Slurp(out_), "one|two|");
}

TEST_P(DeliveryTest, CommandGetsTheMessageInEnvAndStdin) {
  Register("env", {{"status", "idle"},
                   {"delivery_command", "cat > " + Quote(out_ + ".in") +
                                            "; printf '%s %s %s' \"$BATON_MESSAGE_ID\" "
                                            "\"$BATON_MESSAGE_FROM\" \"$BATON_MESSAGE_TO\" > " +
                                            Quote(out_ + ".env")}});
  Json sent = Send("env", "line one\nline 'two' $HOME");
  EXPECT_EQ(Deliver()["delivered"].size(), 1u);
  EXPECT_EQ(Slurp(out_ + ".in"), "line one\nline 'two' $HOME");
  EXPECT_EQ(Slurp(out_ + ".env"), sent[0]["id"].get<std::string>() + " alice env");
}

TEST_P(DeliveryTest, FailuresAreRetriedThenEscalatedWithTheSenderTold) {
  Register("broken", {{"status", "idle"}, {"delivery_command", "echo no pane >&2; exit 3"}});
  Json sent = Send("broken", "are you there?", Agent("coder"));
  const std::string id = sent[0]["id"];
  const Json options = {{"max_attempts", 3}, {"retry_after_ms", 0}};
  for (int attempt = 1; attempt <= 2; ++attempt) {
    Json pass = Deliver(options);
    ASSERT_EQ(pass["failed"].size(), 1u) << "attempt " << attempt << ": " << pass.dump();
    EXPECT_EQ(pass["failed"][0]["attempts"], attempt);
    Json m = MustCall(*api_, "mail.outbox", Json::object(), Agent("coder"))["messages"][0];
    EXPECT_EQ(m["delivery_status"], "failed");
    EXPECT_EQ(m["delivery_attempts"], attempt);
    EXPECT_EQ(m["last_error"], "exit status 3: no pane");
  }
  Json pass = Deliver(options);
  ASSERT_EQ(pass["escalated"].size(), 1u) << pass.dump();
  EXPECT_EQ(MustCall(*api_, "mail.outbox", Json::object(),
                     Agent("coder"))["messages"][0]["delivery_status"],
            "escalated");
  Json events = Kinds(*api_, "message.escalated");
  ASSERT_EQ(events.size(), 1u);
  const std::string summary = events[0]["summary"];
  for (const std::string& part : {id, std::string("coder"), std::string("broken"),
                                  std::string("3 attempts"), std::string("exit status 3")}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " not in: " << summary;
  }
  EXPECT_EQ(Kinds(*api_, "message.delivery_failed").size(), 2u);
  // The sender hears of it; further passes leave the message alone.
  Json notice = Peek("coder");
  ASSERT_EQ(notice.size(), 1u);
  EXPECT_EQ(notice[0]["from"], "baton");
  EXPECT_NE(notice[0]["body"].get<std::string>().find(id), std::string::npos);
  pass = Deliver(options);
  EXPECT_TRUE(pass["failed"].empty() && pass["escalated"].empty()) << pass.dump();
}

TEST_P(DeliveryTest, RetryWaitsForItsBackoff) {
  Register("broken", {{"status", "idle"}, {"delivery_command", "exit 1"}});
  Send("broken", "x");
  EXPECT_EQ(Deliver({{"retry_after_ms", 600000}})["failed"].size(), 1u);
  Json m = Peek("broken")[0];
  EXPECT_TRUE(m["next_attempt_at"].is_string());
  Json pass = Deliver({{"retry_after_ms", 600000}});
  EXPECT_TRUE(pass["failed"].empty() && pass["skipped"].empty()) << pass.dump();
  EXPECT_EQ(Peek("broken")[0]["delivery_attempts"], 1);
}

TEST_P(DeliveryTest, HangingCommandIsKilledAtItsTimeout) {
  Register("slow", {{"status", "idle"}, {"delivery_command", "sleep 30"}});
  Send("slow", "x");
  const int64_t start = NowMillis();
  Json pass = Deliver({{"timeout_ms", 300}});
  EXPECT_LT(NowMillis() - start, 5000);
  ASSERT_EQ(pass["failed"].size(), 1u) << pass.dump();
  EXPECT_NE(pass["failed"][0]["error"].get<std::string>().find("timed out"), std::string::npos);
}

TEST_P(DeliveryTest, AgentsWithoutACommandAndReadMessagesAreNotPushed) {
  Send("coder", "read your inbox");
  SetStatus("pusher", "idle");
  Send("pusher", "already read");
  MustCall(*api_, "mail.inbox", Json::object(), Agent("pusher"));
  Json pass = Deliver();
  EXPECT_TRUE(pass["delivered"].empty() && pass["skipped"].empty()) << pass.dump();
  EXPECT_EQ(Peek("coder")[0]["delivery_status"], "pending");
  EXPECT_EQ(Slurp(out_), "");
}

TEST_P(DeliveryTest, DeliveryOpsAreForCoordinatorsAndBaton) {
  ExpectRefused("mail.deliver", Json::object(), StatusCode::kPermissionDenied, Agent("coder"));
  ExpectRefused("mail.pending_deliveries", Json::object(), StatusCode::kPermissionDenied,
                Coordinator());
  ExpectRefused("mail.record_delivery", {{"id", "msg-x"}, {"ok", true}},
                StatusCode::kPermissionDenied, Coordinator());
}

TEST_P(MailTest, ChatHistoryIsOldestFirstPerChannel) {
  for (const char* body : {"a", "b", "c"}) {
    MustCall(*api_, "chat.post", {{"channel", "team:alpha"}, {"body", body}}, Agent("coder"));
  }
  MustCall(*api_, "chat.post", {{"channel", "team:beta"}, {"body", "z"}});
  auto bodies = [&](const Json& in) {
    std::string out;
    const Json history = MustCall(*api_, "chat.history", in);
    for (const Json& m : history["messages"]) {
      out += m["body"].get<std::string>();
    }
    return out;
  };
  EXPECT_EQ(bodies({{"channel", "team:alpha"}}), "abc");
  EXPECT_EQ(bodies({{"channel", "team:alpha"}, {"limit", 2}}), "bc");
  Json first = MustCall(*api_, "chat.history", {{"channel", "team:alpha"}})["messages"][0];
  EXPECT_EQ(first["from"], "coder");
  EXPECT_EQ(bodies({{"channel", "team:alpha"}, {"since", first["seq"]}}), "bc");
  Json channels = MustCall(*api_, "chat.channels", Json::object())["channels"];
  ASSERT_EQ(channels.size(), 2u);
  EXPECT_EQ(channels[0]["channel"], "team:alpha");
  EXPECT_EQ(channels[0]["messages"], 3);
  EXPECT_EQ(channels[1]["messages"], 1);
  EXPECT_EQ(Kinds(*api_, "chat.posted").size(), 4u);
  ExpectRefused("chat.post", {{"channel", "team:alpha"}, {"body", "x"}, {"from", "coder2"}},
                StatusCode::kPermissionDenied, Agent("coder"));
}

BATON_INSTANTIATE_BACKENDS(MailTest);
BATON_INSTANTIATE_BACKENDS(DeliveryTest);

// Genie's C-MB-01: concurrent sends must all land.
void ExpectTenConcurrentSendsLand(const std::function<Api&(int)>& api_for, Api& reader) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 10; ++t) {
    threads.emplace_back([&, t] {
      Result<Json> r =
          api_for(t).Call("mail.send", {{"to", "inbox"}, {"body", "m" + std::to_string(t)}},
                          Agent("s" + std::to_string(t)));
      if (!r.ok()) {
        ++failures;
        ADD_FAILURE() << r.status().ToString();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  std::set<std::string> bodies;
  const Json inbox = MustCall(reader, "mail.peek", {{"agent", "inbox"}, {"limit", 100}});
  for (const Json& m : inbox["messages"]) {
    bodies.insert(m["body"].get<std::string>());
  }
  EXPECT_EQ(bodies.size(), 10u);
  EXPECT_TRUE(MustCall(reader, "ledger.verify", Json::object())["ok"].get<bool>());
}

TEST(MailConcurrencyTest, TenConcurrentSendsThroughOneGroupCommitApi) {
  testing::TempDir dir;
  auto api = testing::OpenApi(dir.File("baton.db"), /*group_commit=*/true);
  MustCall(*api, "agent.register", {{"id", "inbox"}});
  ExpectTenConcurrentSendsLand([&](int) -> Api& { return *api; }, *api);
}

TEST(MailConcurrencyTest, TenConcurrentSendsThroughSeparateApisOnOneFile) {
  testing::TempDir dir;
  std::vector<std::unique_ptr<Api>> apis;
  for (int i = 0; i < 10; ++i) apis.push_back(testing::OpenApi(dir.File("baton.db")));
  MustCall(*apis[0], "agent.register", {{"id", "inbox"}});
  ExpectTenConcurrentSendsLand([&](int t) -> Api& { return *apis[t]; }, *apis[0]);
}

// A real tmux pane running `cat > file`: the delivery command types into it.
class TmuxServer {
 public:
  TmuxServer()
      : socket_("baton-test-" + std::to_string(getpid()) + "-" + std::to_string(NowMillis())) {}
  ~TmuxServer() { (void)testing::RunShell("tmux -L " + socket_ + " kill-server 2>/dev/null"); }
  std::string Tmux(const std::string& args) const { return "tmux -L " + socket_ + " " + args; }

 private:
  std::string socket_;
};

TEST(MailTmuxTest, DeliversIntoAnIdleAgentsPane) {
  if (testing::RunShell("command -v tmux >/dev/null 2>&1").exit_code != 0) {
    GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  }
  testing::TempDir dir;
  const std::string out = dir.File("pane.txt");
  TmuxServer tmux;
  ASSERT_EQ(testing::RunShell(tmux.Tmux("new-session -d -s t " + Quote("cat > " + out))).exit_code,
            0);
  auto api = testing::OpenApi(dir.File("baton.db"));
  MustCall(*api, "agent.register",
           {{"id", "paned"},
            {"status", "working"},
            {"delivery_command", tmux.Tmux("send-keys -t t -l \"$BATON_MESSAGE_BODY\"") + " && " +
                                     tmux.Tmux("send-keys -t t Enter")}},
           Granted(Human()));
  MustCall(*api, "mail.send", {{"to", "paned"}, {"body", "hello pane 42"}});
  auto wait_for_body = [&](int64_t millis) {
    const int64_t deadline = NowMillis() + millis;
    while (NowMillis() < deadline) {
      if (Slurp(out).find("hello pane 42") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  Json pass = MustCall(*api, "mail.deliver", Json::object(), Granted(Coordinator()));
  EXPECT_EQ(pass["skipped"].size(), 1u) << pass.dump();
  EXPECT_FALSE(wait_for_body(300)) << "typed into a working agent";

  MustCall(*api, "agent.set_status", {{"id", "paned"}, {"status", "idle"}});
  pass = MustCall(*api, "mail.deliver", Json::object(), Granted(Coordinator()));
  ASSERT_EQ(pass["delivered"].size(), 1u) << pass.dump();
  EXPECT_TRUE(wait_for_body(5000)) << "pane output: " << Slurp(out);
}

}  // namespace
}  // namespace baton
