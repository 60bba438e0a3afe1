// Issue 16: the dashboard's server side as a browser and a script meet it —
// the page's files under a strict policy, the session cookie and what it may
// not do from another origin, the ledger as server-sent events (replay after
// Last-Event-ID, reset past the limit, heartbeats, the cap on streams that
// leaves API workers free), and --notify-command. The page itself is driven
// in Chromium by tests/e2e/dashboard*.test.mjs.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_util.h"
#include "util/clock.h"

namespace baton::testing {
namespace {

httplib::Headers Bearer(const std::string& secret) {
  return {{"Authorization", "Bearer " + secret}};
}

httplib::Result Post(int port, const std::string& path, const Json& body,
                     const httplib::Headers& headers) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  return client.Post(path, headers, body.dump(), "application/json");
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads GET /v1/events until "done" says so (given everything read so far)
// or "timeout_ms" passes; returns what was read and the status.
struct Stream {
  int status = 0;
  std::string text;
};
Stream ReadEvents(int port, const httplib::Headers& headers,
                  const std::function<bool(const std::string&)>& done, int timeout_ms = 10000,
                  const std::string& path = "/v1/events") {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(timeout_ms / 1000 + 1, 0);
  Stream s;
  s.status = -1;
  const int64_t deadline = NowMillis() + timeout_ms;
  client.Get(
      path, headers,
      [&](const httplib::Response& r) {
        s.status = r.status;
        return true;
      },
      [&](const char* data, size_t n) {
        s.text.append(data, n);
        return !done(s.text) && NowMillis() < deadline;
      });
  return s;
}

// The "id:" lines of a stream, in order.
std::vector<int64_t> Ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("id: ", 0) == 0) ids.push_back(std::stoll(line.substr(4)));
  }
  return ids;
}

class DashboardHttpTest : public ::testing::Test {
 protected:
  // "n" runs made directly on the store (no server), durability off: fast.
  void Seed(int n, const std::string& profile = "baton") {
    ApiOptions options;
    options.store.location = store_;
    options.store.durability = Durability::kOff;
    Result<std::unique_ptr<Api>> api = Api::Open(options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    for (int i = 0; i < n; ++i) {
      MustCall(**api, "run.create", {{"profile", profile}, {"title", "run " + std::to_string(i)}});
    }
  }
  int64_t Events(int port, const std::string& secret) {
    auto res = Post(port, "/v1/ops/store.status", Json::object(), Bearer(secret));
    return res ? Json::parse(res->body)["counts"]["events"].get<int64_t>() : -1;
  }

  TempDir dir_;
  const std::string store_ = dir_.File("baton.db");
};

TEST_F(DashboardHttpTest, ThePageIsServedUnderAStrictPolicyWithoutAnyData) {
  ServeProcess server(store_);
  httplib::Client client("127.0.0.1", server.port());
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  // The shell names its script; no inline script or style attribute.
  EXPECT_NE(page->body.find("/assets/"), std::string::npos);
  EXPECT_EQ(page->body.find("<script>"), std::string::npos);
  EXPECT_EQ(page->body.find(" style="), std::string::npos);
  EXPECT_EQ(page->body.find(server.secret()), std::string::npos);
  // Revalidation by ETag.
  const std::string etag = page->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto again = client.Get("/", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  // Only the dashboard's own files.
  for (const char* path : {"/assets/baton.db", "/assets/..%2fbaton.db", "/assets/.secret",
                           "/assets/%2e%2e/baton.db.secret"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
}

TEST_F(DashboardHttpTest, TheSessionCookieSignsThePageInAndIsRefusedFromAnotherOrigin) {
  ServeProcess server(store_);
  const int port = server.port();
  const std::string own = "http://127.0.0.1:" + std::to_string(port);
  httplib::Client client("127.0.0.1", port);
  auto anon = client.Get("/v1/session");
  ASSERT_TRUE(anon);
  EXPECT_EQ(anon->status, 401);
  auto wrong = Post(port, "/v1/session", {{"token", "baton_not-the-secret"}}, {{"Origin", own}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_FALSE(wrong->has_header("Set-Cookie"));
  auto evil_login = Post(port, "/v1/session", {{"token", server.secret()}},
                         {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(evil_login);
  EXPECT_EQ(evil_login->status, 403);

  auto login = Post(port, "/v1/session", {{"token", server.secret()}}, {{"Origin", own}});
  ASSERT_TRUE(login);
  ASSERT_EQ(login->status, 200) << login->body;
  const std::string cookie = login->get_header_value("Set-Cookie");
  const std::string name = "baton_session_" + std::to_string(port);
  ASSERT_EQ(cookie.rfind(name + "=", 0), 0u) << cookie;
  const std::string session = cookie.substr(name.size() + 1, cookie.find(';') - name.size() - 1);
  // The cookie never holds the credential signed in with.
  EXPECT_EQ(cookie.find(server.secret()), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  const std::string proof = Json::parse(login->body)["proof"];
  ASSERT_FALSE(proof.empty());
  EXPECT_EQ(login->body.find(session), std::string::npos);  // the page never sees the cookie

  // Browsers send the cookie to every port of the host: alone it is nothing.
  const httplib::Headers leaked = {{"Cookie", name + "=" + session}};
  auto alone = client.Get("/v1/session", leaked);
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->status, 401);
  EXPECT_NE(alone->body.find("X-Baton-Proof"), std::string::npos) << alone->body;
  auto as_bearer = Post(port, "/v1/ops/run.list", Json::object(), Bearer(session));
  ASSERT_TRUE(as_bearer);
  EXPECT_EQ(as_bearer->status, 401);
  httplib::Headers wrong_proof = leaked;
  wrong_proof.emplace("X-Baton-Proof", session);
  auto wrong_p = client.Get("/v1/session", wrong_proof);
  ASSERT_TRUE(wrong_p);
  EXPECT_EQ(wrong_p->status, 401);

  const httplib::Headers with_cookie = {{"Cookie", "other=1; " + name + "=" + session},
                                        {"X-Baton-Proof", proof}};
  auto who = client.Get("/v1/session", with_cookie);
  ASSERT_TRUE(who);
  EXPECT_EQ(Json::parse(who->body)["actor"]["role"], "human");
  // An EventSource sends no headers: the proof may come as ?proof=.
  Stream events = ReadEvents(port, leaked, [](const std::string& t) {
    return t.find("event: hello") != std::string::npos;
  }, 5000, "/v1/events?proof=" + proof);
  EXPECT_EQ(events.status, 200);

  const int64_t before = Events(port, server.secret());
  const Json create = {{"profile", "baton"}, {"title", "from the page"}};
  for (const httplib::Headers& origin :
       {httplib::Headers{}, httplib::Headers{{"Origin", "http://evil.example"}},
        httplib::Headers{{"Origin", "http://localhost:" + std::to_string(port + 1)}}}) {
    httplib::Headers h = with_cookie;
    h.insert(origin.begin(), origin.end());
    auto res = Post(port, "/v1/ops/run.create", create, h);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << res->body;
    // A loopback origin passes the DNS-rebinding check, not the page's.
    if (origin.empty() || origin.begin()->second.find("localhost") != std::string::npos) {
      EXPECT_NE(res->body.find("dashboard's own page"), std::string::npos) << res->body;
    }
  }
  EXPECT_EQ(Events(port, server.secret()), before);  // nothing changed
  httplib::Headers same = with_cookie;
  same.emplace("Origin", own);
  auto ok = Post(port, "/v1/ops/run.create", create, same);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(Events(port, server.secret()), before + 1);

  // Another server's cookie (another port) is not this one's.
  auto other = client.Get("/v1/session", {{"Cookie", "baton_session_1=" + server.secret()}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 401);
  auto out = client.Delete("/v1/session", same);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 204);
  EXPECT_NE(out->get_header_value("Set-Cookie").find("Max-Age=0"), std::string::npos);
  // Signed out is ended: the cookie and the proof no longer count.
  auto after = client.Get("/v1/session", with_cookie);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 401);
}

TEST_F(DashboardHttpTest, ASessionMadeWithATokenEndsWithTheToken) {
  ServeProcess server(store_);
  const int port = server.port();
  const std::string own = "http://127.0.0.1:" + std::to_string(port);
  const std::string token = MakeToken(store_, "watcher", "agent");
  auto login = Post(port, "/v1/session", {{"token", token}}, {{"Origin", own}});
  ASSERT_TRUE(login);
  ASSERT_EQ(login->status, 200) << login->body;
  const std::string cookie = login->get_header_value("Set-Cookie");
  const std::string name = "baton_session_" + std::to_string(port);
  const httplib::Headers h = {
      {"Cookie", cookie.substr(0, cookie.find(';'))},
      {"X-Baton-Proof", Json::parse(login->body)["proof"].get<std::string>()}};
  httplib::Client client("127.0.0.1", port);
  auto who = client.Get("/v1/session", h);
  ASSERT_TRUE(who);
  EXPECT_EQ(Json::parse(who->body)["actor"]["id"], "watcher");
  // What needs the human is not an agent's to read (it shows others' mail).
  auto inbox = Post(port, "/v1/ops/inbox.list", Json::object(),
                    {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(inbox);
  EXPECT_EQ(inbox->status, 403);
  const Json tokens = Json::parse(Post(port, "/v1/ops/token.list", Json::object(),
                                       Bearer(server.secret()))->body)["tokens"];
  ASSERT_EQ(tokens.size(), 1u);
  auto revoked = Post(port, "/v1/ops/token.revoke", {{"id", tokens[0]["id"]}}, Bearer(server.secret()));
  ASSERT_TRUE(revoked);
  ASSERT_EQ(revoked->status, 200) << revoked->body;
  auto after = client.Get("/v1/session", h);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 401);
}

TEST_F(DashboardHttpTest, UnderAuthNoneAPageOnAnotherPortChangesNothing) {
  ServeProcess server(store_, {"--auth", "none"});
  const int port = server.port();
  const Json create = {{"profile", "baton"}, {"title", "from elsewhere"}};
  auto foreign = Post(port, "/v1/ops/run.create", create,
                      {{"Origin", "http://127.0.0.1:" + std::to_string(port + 1)}});
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  EXPECT_NE(foreign->body.find("--auth none"), std::string::npos) << foreign->body;
  auto own = Post(port, "/v1/ops/run.create", create,
                  {{"Origin", "http://127.0.0.1:" + std::to_string(port)}});
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  auto script = Post(port, "/v1/ops/run.create", create, {});  // no Origin: not a browser
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
}

TEST_F(DashboardHttpTest, AReconnectingStreamGetsWhatItMissedOnceThenLiveEvents) {
  Seed(5);
  ServeProcess server(store_);
  const int port = server.port();
  httplib::Headers h = Bearer(server.secret());
  h.emplace("Last-Event-ID", "2");
  std::atomic<bool> wrote{false};
  std::atomic<bool> replayed{false};
  // The write comes once the stream has replayed what it missed, so that
  // event 6 reaches it live.
  std::thread writer([&] {
    EXPECT_TRUE(Eventually([&] { return replayed.load(); }));
    Post(port, "/v1/ops/run.create", {{"profile", "baton"}, {"title", "live"}},
         Bearer(server.secret()));
    wrote = true;
  });
  Stream s = ReadEvents(port, h, [&](const std::string& t) {
    if (t.find("id: 5\n") != std::string::npos) replayed = true;
    return t.find("id: 6\n") != std::string::npos;
  });
  writer.join();
  EXPECT_EQ(s.status, 200);
  EXPECT_NE(s.text.find("event: hello\ndata: {\"head\":5}"), std::string::npos) << s.text;
  EXPECT_EQ(Ids(s.text), (std::vector<int64_t>{3, 4, 5, 6})) << s.text;
  EXPECT_NE(s.text.find("\"kind\":\"run.created\""), std::string::npos);
  EXPECT_EQ(s.text.find("\"payload\""), std::string::npos);  // frames stay small

  // The same position by ?after= (a script without EventSource).
  Stream q = ReadEvents(port, Bearer(server.secret()),
                        [](const std::string& t) { return t.find("id: 6\n") != std::string::npos; },
                        5000, "/v1/events?after=4");
  EXPECT_EQ(Ids(q.text), (std::vector<int64_t>{5, 6})) << q.text;

  // A fresh stream replays nothing.
  Stream fresh = ReadEvents(port, Bearer(server.secret()), [](const std::string& t) {
    return t.find("event: hello") != std::string::npos;
  });
  EXPECT_TRUE(Ids(fresh.text).empty()) << fresh.text;
}

// Three agents write as fast as they can while streams are opened one after
// another at positions just behind the head: every stream must list every
// seq after its position, once, in order (a stream joining while the feed
// was telling the others of new events once skipped them).
TEST_F(DashboardHttpTest, StreamsOpenedWhileAgentsWriteMissNothing) {
  Seed(3);
  ServeProcess server(store_);
  const int port = server.port();
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w) {
    writers.emplace_back([&] {
      while (!stop.load()) {
        Post(port, "/v1/ops/run.create", {{"profile", "baton"}, {"title", "w"}},
             Bearer(server.secret()));
      }
    });
  }
  int checked = 0;
  for (int round = 0; round < 12; ++round) {
    const int64_t head = Events(port, server.secret());
    const int64_t from = std::max<int64_t>(0, head - 3);
    const int64_t until = head + 15;  // well after the stream has joined
    Stream s = ReadEvents(port, Bearer(server.secret()), [&](const std::string& t) {
      return t.find("id: " + std::to_string(until) + "\n") != std::string::npos;
    }, 20000, "/v1/events?after=" + std::to_string(from));
    std::vector<int64_t> ids = Ids(s.text);
    ASSERT_FALSE(ids.empty()) << s.text.substr(0, 300);
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_EQ(ids[i], from + 1 + static_cast<int64_t>(i)) << "round " << round << ": " << s.text;
    }
    EXPECT_GE(ids.back(), until);
    ++checked;
  }
  stop = true;
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(checked, 12);
}

TEST_F(DashboardHttpTest, TooMuchMissedOrAnotherStoresPositionGetsAResetNotAFlood) {
  Seed(1005);
  ServeProcess server(store_);
  const auto until_reset = [](const std::string& t) {
    return t.find("event: reset") != std::string::npos;
  };
  httplib::Headers far = Bearer(server.secret());
  far.emplace("Last-Event-ID", "1");
  Stream s = ReadEvents(server.port(), far, until_reset);
  EXPECT_NE(s.text.find("id: 1005\nevent: reset\ndata: {\"head\":1005,"), std::string::npos)
      << s.text.substr(0, 500);
  EXPECT_EQ(s.text.find("event: ledger"), std::string::npos);  // no flood of 1,004
  httplib::Headers ahead = Bearer(server.secret());
  ahead.emplace("Last-Event-ID", "999999");
  EXPECT_NE(ReadEvents(server.port(), ahead, until_reset).text.find("event: reset"),
            std::string::npos);
  httplib::Headers bad = Bearer(server.secret());
  bad.emplace("Last-Event-ID", "12; DROP");
  Stream b = ReadEvents(server.port(), bad, [](const std::string&) { return true; });
  EXPECT_EQ(b.status, 400);
  EXPECT_NE(b.text.find("Last-Event-ID"), std::string::npos) << b.text;
}

TEST_F(DashboardHttpTest, StreamsPingAreCappedAndNeverTakeTheApisWorkers) {
  // Streams may take at most half the workers long requests may have.
  ProcessResult refused = RunBaton({"--store", store_, "serve", "--listen", "127.0.0.1:0",
                                    "--threads", "4", "--reserve", "1", "--max-event-streams", "2"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--max-event-streams 2: at most half"), std::string::npos)
      << refused.err;

  ServeProcess server(store_, {"--max-event-streams", "4", "--event-heartbeat-ms", "200",
                               "--threads", "12", "--reserve", "2"});
  const int port = server.port();
  // Unauthenticated: no stream.
  EXPECT_EQ(ReadEvents(port, {}, [](const std::string&) { return true; }).status, 401);

  // Agents (every caller but the human) share three of the four.
  const std::string agent = MakeToken(store_, "watcher", "agent");
  std::atomic<int> pinged{0};  // streams that got a heartbeat, each counted once
  std::atomic<bool> stop{false};
  std::vector<std::thread> holders;
  auto hold = [&](const std::string& secret) {
    holders.emplace_back([&, secret] {
      bool counted = false;
      ReadEvents(port, Bearer(secret), [&](const std::string& t) {
        if (!counted && t.find(": ping") != std::string::npos) {
          counted = true;
          ++pinged;
        }
        return stop.load();
      }, 20000);
    });
  };
  for (int i = 0; i < 3; ++i) hold(agent);
  for (int i = 0; i < 50 && pinged.load() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(pinged.load(), 3);  // all three hold a stream, each pinged after 200 ms of silence
  httplib::Client client("127.0.0.1", port);
  auto fourth = client.Get("/v1/events", Bearer(agent));  // refused at once: no stream to hang on
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->status, 503);
  EXPECT_EQ(fourth->get_header_value("Retry-After"), "5");
  EXPECT_NE(fourth->body.find("--max-event-streams"), std::string::npos);
  hold(server.secret());  // the human's tab still gets one
  // Once it holds the fourth, all are taken (a probe that got in first
  // leaves at once and frees its place a heartbeat later).
  int fifth = 0;
  for (int i = 0; i < 50 && fifth != 503; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fifth = ReadEvents(port, Bearer(server.secret()), [](const std::string&) { return true; },
                       3000).status;
  }
  EXPECT_EQ(fifth, 503);
  // Four of twelve workers are held by streams: API calls are still answered.
  for (int i = 0; i < 5; ++i) {
    auto res = Post(port, "/v1/ops/run.list", Json::object(), Bearer(server.secret()));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
  stop = true;
  Post(port, "/v1/ops/run.create", {{"profile", "baton"}, {"title", "wake"}}, Bearer(server.secret()));
  for (std::thread& t : holders) t.join();
  // A stream closed frees its place (once its next write finds the client
  // gone: a heartbeat later).
  Stream again;
  for (int i = 0; i < 20 && again.status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    again = ReadEvents(port, Bearer(server.secret()), [](const std::string& t) {
      return t.find("event: hello") != std::string::npos;
    });
  }
  EXPECT_EQ(again.status, 200);
}

TEST_F(DashboardHttpTest, TheNotifyCommandAnnouncesNewItemsOnceAndTheLedgerSaysSo) {
  Seed(2, "sgai");
  {
    Result<std::unique_ptr<Api>> api = Api::Open(ApiOptions{.store = {.location = store_}});
    ASSERT_TRUE(api.ok());
    const std::string run = MustCall(**api, "run.list", Json::object())["runs"][1]["id"];
    MustCall(**api, "question.ask", {{"run", run}, {"work_gate", true}}, Agent("early"));
  }
  const std::string log = dir_.File("notified.log");
  const std::string item = dir_.File("item.json");
  ServeProcess server(store_, {"--notify-command", "cat > '" + item + "'; echo \"$BATON_ITEM_KIND " +
                                                       "$BATON_ITEM_FROM $BATON_DASHBOARD_URL\" >> '" +
                                                       log + "'"});
  const std::string agent = MakeToken(store_, "coder", "agent");
  Json runs = Json::parse(Post(server.port(), "/v1/ops/run.list", Json::object(),
                               Bearer(server.secret()))->body);
  const std::string run = runs["runs"][0]["id"];
  auto asked = Post(server.port(), "/v1/ops/question.ask",
                    {{"run", run}, {"questions", {{{"question", "Deploy?"}, {"choices", {"yes", "no"}}}}}},
                    Bearer(agent));
  ASSERT_TRUE(asked);
  ASSERT_EQ(asked->status, 200) << asked->body;
  for (int i = 0; i < 100 && Slurp(log).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Only the new item, once; the one waiting at start is the page's to show.
  EXPECT_EQ(Slurp(log), "question coder http://127.0.0.1:" + std::to_string(server.port()) + "/\n");
  Json announced = Json::parse(Slurp(item), nullptr, false);
  EXPECT_EQ(announced["title"], "Deploy?");
  EXPECT_EQ(announced["run_id"], run);
  Json events;
  for (int i = 0; i < 50; ++i) {
    events = Json::parse(Post(server.port(), "/v1/ops/ledger.events", {{"kind", "inbox.notified"}},
                              Bearer(server.secret()))->body)["events"];
    if (!events.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["outcome"], "sent");
  EXPECT_EQ(events[0]["payload"]["item"], announced["id"]);
  EXPECT_EQ(events[0]["run_id"], run);
}

TEST_F(DashboardHttpTest, AFailingNotifyCommandIsRetriedThenRecordedAsFailed) {
  Seed(1, "sgai");
  const std::string tries = dir_.File("tries");
  ServeProcess server(store_, {"--notify-command", "echo x >> '" + tries + "'; echo nope >&2; exit 3"});
  const std::string agent = MakeToken(store_, "coder", "agent");
  const std::string run = Json::parse(Post(server.port(), "/v1/ops/run.list", Json::object(),
                                           Bearer(server.secret()))->body)["runs"][0]["id"];
  Post(server.port(), "/v1/ops/question.ask", {{"run", run}, {"work_gate", true}}, Bearer(agent));
  Json events;
  for (int i = 0; i < 150 && events.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    events = Json::parse(Post(server.port(), "/v1/ops/ledger.events", {{"kind", "inbox.notified"}},
                              Bearer(server.secret()))->body)["events"];
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["outcome"], "failed");
  EXPECT_EQ(events[0]["payload"]["attempts"], 3);
  EXPECT_EQ(events[0]["payload"]["exit_code"], 3);
  EXPECT_NE(events[0]["payload"]["error"].get<std::string>().find("nope"), std::string::npos);
  EXPECT_EQ(Slurp(tries), "x\nx\nx\n");
}

}  // namespace
}  // namespace baton::testing
