// Issue 21 item 7: `baton ledger archive` moves the oldest events to a file
// and the store keeps an anchor; `baton verify` still proves the chain from
// it, `verify --archive` proves the file, and whatever is changed in either
// — a line of the archive edited with zcat and gzip as anyone could, the
// anchor's row, lines dropped or the file cut short — is named. Nothing an
// open run or question needs leaves the store.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/ledger/ledger.h"
#include "test_util.h"

namespace baton::testing {
namespace {

// A run with "notes" progress notes, finished (cancelled) when "finish".
std::string MakeRun(Api& api, int notes, bool finish) {
  const std::string run = MustCall(api, "run.create", {{"title", "r"}})["id"];
  for (int i = 0; i < notes; ++i) {
    MustCall(api, "run.add_progress", {{"id", run}, {"description", "note " + std::to_string(i)}});
  }
  if (finish) MustCall(api, "run.set_status", {{"id", run}, {"status", "cancelled"}});
  return run;
}

Json Archive(Api& api, const std::string& before, const std::string& file) {
  return MustCall(api, "ledger.archive", {{"before", before}, {"file", file}});
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The archive's lines, decompressed as a person would.
std::string Unzipped(const std::string& file) {
  const ProcessResult r = RunShell("zcat '" + file + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// Writes "text" gzip-compressed over "file".
void Rezip(const std::string& file, const std::string& text) {
  const std::string plain = file + ".plain";
  std::ofstream(plain, std::ios::binary) << text;
  const ProcessResult r = RunShell("gzip -c '" + plain + "' > '" + file + "' && rm '" + plain + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// The message of a verify --archive that must fail.
std::string ArchiveFailure(Api& api, const std::string& file) {
  Result<Json> r = api.Call("ledger.verify", {{"archive", file}}, Human());
  EXPECT_FALSE(r.ok()) << "an altered archive verified: " << r->dump();
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  return r.status().message();
}

class LedgerArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = OpenApi(dir_.File("baton.db")); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
  std::unique_ptr<Api> api_;
};

TEST_F(LedgerArchiveTest, ArchivedStoreAndArchiveBothVerifyAndTheStoreKeepsWorking) {
  const std::string old_run = MakeRun(*api_, 30, /*finish=*/true);
  const int64_t cut = LedgerLength(*api_);
  const std::string open_run = MakeRun(*api_, 3, /*finish=*/false);
  const Json before = MustCall(*api_, "ledger.verify", Json::object());
  const int64_t head = LedgerLength(*api_);

  // What a killed archive of the same file left half written goes.
  std::ofstream(File(".old.jsonl.gz.baton-tmp-4242-7")) << "half an archive";
  const Json a = Archive(*api_, std::to_string(cut + 1), File("old.jsonl.gz"));
  EXPECT_FALSE(std::filesystem::exists(File(".old.jsonl.gz.baton-tmp-4242-7")));
  EXPECT_EQ(a["first_seq"], 1);
  EXPECT_EQ(a["through_seq"], cut);
  EXPECT_EQ(a["events"], cut);
  EXPECT_EQ(a["event_seq"], head + 1);
  EXPECT_FALSE(a.contains("held_by")) << a.dump();
  EXPECT_GT(a["bytes"].get<int64_t>(), 0);
  EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(File("old.jsonl.gz"))), a["bytes"]);

  // The archived events left the store; the rest and the head did not.
  const Json events = MustCall(*api_, "ledger.events", Json::object())["events"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["seq"], cut + 1);
  EXPECT_EQ(events.back()["kind"], "ledger.archived");
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", old_run}})["progress_count"], 0);
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", open_run}})["progress_count"], 3);

  const Json verified = MustCall(*api_, "ledger.verify", Json::object());
  EXPECT_EQ(verified["archived_through"], cut);
  EXPECT_EQ(verified["events"], head + 1);
  const Json deep = MustCall(*api_, "ledger.verify", {{"deep", true}});
  EXPECT_GT(deep["rows_checked"].get<int64_t>(), 0);
  const Json proved = MustCall(*api_, "ledger.verify", {{"archive", File("old.jsonl.gz")}});
  EXPECT_EQ(proved["archive"]["first_seq"], 1);
  EXPECT_EQ(proved["archive"]["through_seq"], cut);
  EXPECT_EQ(proved["archive"]["sha256_matches"], true);
  EXPECT_EQ(proved["events"], cut);
  // A checkpoint taken before the archive still verifies from its seq; one
  // inside the archive is refused by name.
  MustCall(*api_, "ledger.verify",
           {{"since", before["events"]}, {"since_hash", before["head_hash"]}});
  const Status inside = Refused(*api_, "ledger.verify", {{"since", 2}, {"since_hash", std::string(64, 'a')}},
                                StatusCode::kFailedPrecondition);
  EXPECT_NE(inside.message().find("archived"), std::string::npos) << inside.ToString();

  // Writes go on, in this process and in a new one (whose start-up check
  // walks the tail of the chain from the anchor).
  MustCall(*api_, "run.add_progress", {{"id", open_run}, {"description", "after"}});
  api_.reset();
  api_ = OpenApi(File("baton.db"), /*group_commit=*/true);
  MustCall(*api_, "run.add_progress", {{"id", open_run}, {"description", "reopened"}});
  MustCall(*api_, "ledger.verify", Json::object());
}

TEST_F(LedgerArchiveTest, TheEventsOfAnOpenRunOrOneWithAnOpenQuestionStay) {
  MakeRun(*api_, 2, /*finish=*/true);
  const int64_t finished_through = LedgerLength(*api_);
  const std::string open_run = MakeRun(*api_, 2, /*finish=*/false);
  MakeRun(*api_, 2, /*finish=*/true);

  const Json a = Archive(*api_, "1000", File("a.jsonl.gz"));
  EXPECT_EQ(a["through_seq"], finished_through);
  EXPECT_NE(a["held_by"].get<std::string>().find(open_run), std::string::npos) << a.dump();

  // Nothing more may go while that run is open.
  const Status held = Refused(*api_, "ledger.archive", {{"before", "1000"}, {"file", File("b.jsonl.gz")}},
                              StatusCode::kFailedPrecondition);
  EXPECT_NE(held.message().find(open_run), std::string::npos) << held.ToString();
  EXPECT_FALSE(std::filesystem::exists(File("b.jsonl.gz")));

  // Finished, its events may go — unless a question is still open on it.
  MustCall(*api_, "run.set_status", {{"id", open_run}, {"status", "cancelled"}});
  const std::string asked = MakeRun(*api_, 0, /*finish=*/false);
  MustCall(*api_, "run.set_status", {{"id", asked}, {"status", "running"}});
  MustCall(*api_, "question.ask", {{"run", asked}, {"work_gate", true}}, Coordinator());
  MustCall(*api_, "run.set_status", {{"id", asked}, {"status", "cancelled"}});
  const Json b = Archive(*api_, "1000", File("b.jsonl.gz"));
  EXPECT_NE(b["held_by"].get<std::string>().find(asked), std::string::npos) << b.dump();
  EXPECT_NE(b["held_by"].get<std::string>().find("open question"), std::string::npos);
  EXPECT_EQ(b["first_seq"], a["through_seq"].get<int64_t>() + 1);

  // Both archives prove themselves and link to each other and the store.
  MustCall(*api_, "ledger.verify", {{"archive", File("a.jsonl.gz")}});
  MustCall(*api_, "ledger.verify", {{"archive", File("b.jsonl.gz")}});
  MustCall(*api_, "ledger.verify", {{"deep", true}});
}

TEST_F(LedgerArchiveTest, AnArchiveByDateTakesTheEventsBeforeIt) {
  FakeTime time;
  api_.reset();
  api_ = OpenApi(File("baton.db"), false, &time);
  MakeRun(*api_, 3, /*finish=*/true);
  const int64_t old_through = LedgerLength(*api_);
  time.Advance(3 * 86400 * 1000LL);
  const std::string day = FormatTime(time.NowMillis() - 86400 * 1000LL).substr(0, 10);
  MakeRun(*api_, 3, /*finish=*/true);
  const Json a = Archive(*api_, day, File("a.jsonl.gz"));
  EXPECT_EQ(a["through_seq"], old_through) << a.dump();
}

TEST_F(LedgerArchiveTest, ATamperedArchivedRowIsNamedBySeq) {
  MakeRun(*api_, 20, /*finish=*/true);
  const int64_t cut = LedgerLength(*api_);
  MakeRun(*api_, 1, /*finish=*/false);
  const std::string file = File("old.jsonl.gz");
  Archive(*api_, std::to_string(cut + 1), file);
  const std::string original = ReadAll(file);
  const std::string text = Unzipped(file);

  // One note's text changed (line 1 is the header; seq N is line N + 1).
  std::string edited = text;
  const size_t at = edited.find("\"note 7\"");
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, 8, "\"note 8\"");
  Rezip(file, edited);
  const std::string altered = ArchiveFailure(*api_, file);
  const int64_t seq_of_note_7 = 1 + 1 + 7;  // run.created, then notes 0..
  EXPECT_NE(altered.find("at seq " + std::to_string(seq_of_note_7) +
                         ": content does not match its hash"),
            std::string::npos)
      << altered;

  // A line dropped: the seq that is missing.
  std::string dropped = text;
  const size_t line_5 = [&] {
    size_t pos = 0;
    for (int i = 0; i < 5; ++i) pos = dropped.find('\n', pos) + 1;  // start of seq 5's line
    return pos;
  }();
  dropped.erase(line_5, dropped.find('\n', line_5) + 1 - line_5);
  Rezip(file, dropped);
  EXPECT_NE(ArchiveFailure(*api_, file).find("at seq 5: event seq 5 is missing"),
            std::string::npos);

  // Cut short: the gzip stream ends early.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << original.substr(0, original.size() / 2);
  EXPECT_NE(ArchiveFailure(*api_, file).find("cut short"), std::string::npos);

  // Rewritten by someone who knows the format: the note changed and every
  // hash after it recomputed, so the file is whole in itself — but it no
  // longer ends on the hash the store recorded (and the chain links to).
  std::string rewritten;
  std::istringstream lines(text);
  std::string prev;
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line);
    if (j.is_array()) {
      if (j[6] == "note 7") j[6] = "note 8";
      if (!prev.empty()) j[10] = prev;
      j[11] = EventHash(j[0], j[1], j[2].is_null() ? "" : j[2].get<std::string>(), j[3], j[4],
                        j[5], j[6], j[7], j[8], j[9], j[10]);
      prev = j[11];
    } else if (j.contains("through_hash")) {
      j["through_hash"] = "set below";
    }
    rewritten += j.dump() + "\n";
  }
  const size_t mark = rewritten.find("\"set below\"");
  ASSERT_NE(mark, std::string::npos);
  rewritten.replace(mark, 11, "\"" + prev + "\"");
  Rezip(file, rewritten);
  EXPECT_NE(ArchiveFailure(*api_, file).find("the archive was rewritten"), std::string::npos);

  // The original file, put back, verifies again.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << original;
  MustCall(*api_, "ledger.verify", {{"archive", file}});
  // A foreign file is no archive.
  Rezip(File("notes.txt"), "hello\n");
  EXPECT_EQ(api_->Call("ledger.verify", {{"archive", File("notes.txt")}}, Human()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LedgerArchiveTest, AnAlteredAnchorFailsVerify) {
  MakeRun(*api_, 5, /*finish=*/true);
  const int64_t cut = LedgerLength(*api_);
  MakeRun(*api_, 1, /*finish=*/false);
  Archive(*api_, std::to_string(cut + 1), File("old.jsonl.gz"));
  MustCall(*api_, "ledger.verify", Json::object());
  if (OnPostgres()) return;  // the edit below is SQLite's file
  api_.reset();
  // Someone holding the file moves the anchor up, as if more were archived.
  const ProcessResult edit =
      RunShell("sqlite3 '" + File("baton.db") +
               "' \"UPDATE ledger_archives SET through_seq = through_seq + 1\"");
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  api_ = OpenApi(File("baton.db"));
  const Status broken = Refused(*api_, "ledger.verify", Json::object(), StatusCode::kDataLoss);
  EXPECT_NE(broken.message().find("verification failed at seq"), std::string::npos)
      << broken.ToString();
}

TEST_F(LedgerArchiveTest, BadRequestsAreRefusedByNameAndChangeNothing) {
  MakeRun(*api_, 2, /*finish=*/true);
  MakeRun(*api_, 1, /*finish=*/false);
  for (const char* before : {"yesterday", "0", "2026-13-45", "-5", "12abc", ""}) {
    const Status s = Refused(*api_, "ledger.archive", {{"before", before}, {"file", File("x.gz")}},
                             StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("before"), std::string::npos) << before << ": " << s.ToString();
  }
  // History leaves the store on the human's word only.
  for (const Actor& caller : {Agent("ann"), Coordinator()}) {
    Refused(*api_, "ledger.archive", {{"before", "3"}, {"file", File("x.gz")}},
            StatusCode::kPermissionDenied, caller);
  }
  // Never over a file, nor into the store's own files, nor outside the roots.
  std::ofstream(File("taken.gz")) << "mine";
  Refused(*api_, "ledger.archive", {{"before", "3"}, {"file", File("taken.gz")}},
          StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadAll(File("taken.gz")), "mine");
  if (!OnPostgres()) {
    Refused(*api_, "ledger.archive", {{"before", "3"}, {"file", File("baton.db-wal")}},
            StatusCode::kPermissionDenied);
  }
  Refused(*api_, "ledger.archive", {{"before", "3"}, {"file", "/etc/baton-archive.gz"}},
          StatusCode::kPermissionDenied, Human());
  Refused(*api_, "ledger.archive", {{"before", std::string("3")}, {"file", File("a\nb.gz")}},
          StatusCode::kInvalidArgument);
  // Nothing before seq 1.
  Refused(*api_, "ledger.archive", {{"before", "1"}, {"file", File("x.gz")}},
          StatusCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(File("x.gz")));
}

TEST_F(LedgerArchiveTest, TextsThatAreNotUtf8AreArchivedByteForByte) {
  // A caller's id is whatever it sent: the hash covers its bytes, so the
  // archive must give back the same bytes.
  if (OnPostgres()) GTEST_SKIP() << "PostgreSQL refuses text that is not UTF-8 at the write";
  const Actor odd{"bad\xff", "human"};
  const std::string run = MustCall(*api_, "run.create", {{"title", "odd"}}, odd)["id"];
  MustCall(*api_, "run.set_status", {{"id", run}, {"status", "cancelled"}}, odd);
  MakeRun(*api_, 1, /*finish=*/false);
  Archive(*api_, "100", File("odd.jsonl.gz"));
  MustCall(*api_, "ledger.verify", {{"archive", File("odd.jsonl.gz")}});
  MustCall(*api_, "ledger.verify", {{"deep", true}});
}

TEST_F(LedgerArchiveTest, ACraftedEndLineIsABrokenArchiveNotACrash) {
  MakeRun(*api_, 2, /*finish=*/true);
  MakeRun(*api_, 1, /*finish=*/false);
  const std::string file = File("old.jsonl.gz");
  Archive(*api_, "100", file);
  std::string text = Unzipped(file);
  const size_t end = text.rfind("{\"end\"");
  ASSERT_NE(end, std::string::npos);
  for (const char* forged : {"{\"end\":\"yes\",\"events\":4}", "{\"end\":true,\"events\":\"4\"}",
                             "{\"end\":true}"}) {
    Rezip(file, text.substr(0, end) + forged + "\n");
    EXPECT_NE(ArchiveFailure(*api_, file).find("end line"), std::string::npos) << forged;
  }
  const size_t header_end = text.find('\n');
  Rezip(file, "{\"baton_ledger_archive\":\"1\"}" + text.substr(header_end));
  EXPECT_EQ(api_->Call("ledger.verify", {{"archive", file}}, Human()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(LedgerArchiveTest, AFailedArchiveLeavesNoFileAndItsLeftoverIsReplacedNextTime) {
  MakeRun(*api_, 3, /*finish=*/true);
  MakeRun(*api_, 1, /*finish=*/false);
  const std::string file = File("old.jsonl.gz");
  if (!OnPostgres()) {
    // The archive's own record refused: nothing changes, the file goes too.
    api_.reset();
    ASSERT_EQ(RunShell("sqlite3 '" + File("baton.db") +
                       "' \"CREATE TRIGGER no_archive BEFORE INSERT ON ledger_archives BEGIN "
                       "SELECT RAISE(ABORT, 'refused'); END\"")
                  .exit_code,
              0);
    api_ = OpenApi(File("baton.db"));
    const int64_t before = LedgerLength(*api_);
    EXPECT_FALSE(api_->Call("ledger.archive", {{"before", "100"}, {"file", file}}, Human()).ok());
    EXPECT_EQ(LedgerLength(*api_), before);
    EXPECT_FALSE(std::filesystem::exists(file));
    api_.reset();
    ASSERT_EQ(RunShell("sqlite3 '" + File("baton.db") + "' 'DROP TRIGGER no_archive'").exit_code, 0);
    api_ = OpenApi(File("baton.db"));
  }
  // A file left by an attempt whose commit failed holds this chain from its
  // anchor: the next attempt replaces it. Made here by archiving a copy of
  // the store into the same file.
  TempDir other;
  for (const char* suffix : {"", "-wal", ".head"}) {
    if (std::filesystem::exists(File("baton.db") + suffix)) {
      std::filesystem::copy_file(File("baton.db") + suffix, other.File("baton.db") + suffix);
    }
  }
  if (!OnPostgres()) {
    auto copy = OpenApi(other.File("baton.db"));
    MustCall(*copy, "ledger.archive", {{"before", "3"}, {"file", file}}, Granted(Human()));
    ASSERT_TRUE(std::filesystem::exists(file));
  } else {
    std::ofstream(file) << "stand-in";
  }
  if (OnPostgres()) {
    // Not this chain's: refused, and left as it was.
    Refused(*api_, "ledger.archive", {{"before", "100"}, {"file", file}},
            StatusCode::kAlreadyExists);
    return;
  }
  const Json a = Archive(*api_, "100", file);
  EXPECT_GT(a["through_seq"].get<int64_t>(), 2);
  MustCall(*api_, "ledger.verify", {{"archive", file}});
}

TEST(LedgerArchiveWitnessTest, AnotherArchivedStoreSwappedInIsCaughtByTheWitness) {
  if (OnPostgres()) GTEST_SKIP() << "the swap is of SQLite files";
  TempDir mine, theirs;
  {
    auto api = OpenApi(mine.File("baton.db"), /*group_commit=*/true);
    MakeRun(*api, 1, /*finish=*/false);
  }
  {
    auto api = OpenApi(theirs.File("baton.db"), /*group_commit=*/true);
    for (int i = 0; i < 3; ++i) MakeRun(*api, 1, /*finish=*/true);
    MakeRun(*api, 0, /*finish=*/false);
    Archive(*api, "100", theirs.File("a.jsonl.gz"));
    MustCall(*api, "ledger.verify", Json::object());
  }
  // Their database under my witness file (what a restored wrong backup or a
  // forger does): my witness's event is archived there, and not as mine.
  for (const char* suffix : {"", "-wal"}) {
    std::filesystem::remove(mine.File("baton.db") + suffix);
    if (std::filesystem::exists(theirs.File("baton.db") + suffix)) {
      std::filesystem::copy_file(theirs.File("baton.db") + suffix, mine.File("baton.db") + suffix);
    }
  }
  auto api = OpenApi(mine.File("baton.db"));
  const Status caught = Refused(*api, "ledger.verify", Json::object(), StatusCode::kDataLoss);
  EXPECT_NE(caught.message().find(mine.File("baton.db.head")), std::string::npos)
      << caught.ToString();
}

TEST(LedgerArchiveCliTest, TheReadmeStoryArchivesAndProvesBothParts) {
  if (OnPostgres()) GTEST_SKIP() << "the CLI's store is a file";
  TempDir dir;
  const std::string store = InitStore(dir.File("baton.db"));
  auto baton = [&store](std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", store});
    return RunBaton(args);
  };
  ProcessResult made = baton({"run", "create", "--title", "old", "--output", "id"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string run = made.out.substr(0, made.out.find('\n'));
  ASSERT_EQ(baton({"run", "set-status", run, "--status", "cancelled"}).exit_code, 0);
  ASSERT_EQ(baton({"run", "create", "--title", "new"}).exit_code, 0);

  const ProcessResult archived = baton({"ledger", "archive", "--before", "3", "--output", "json"});
  ASSERT_EQ(archived.exit_code, 0) << archived.err;
  const std::string file = Json::parse(archived.out)["file"];
  EXPECT_EQ(std::filesystem::path(file).parent_path(), std::filesystem::path(store).parent_path());
  const ProcessResult store_ok = baton({"verify"});
  EXPECT_EQ(store_ok.exit_code, 0) << store_ok.err;
  EXPECT_NE(store_ok.out.find("1..2 archived"), std::string::npos) << store_ok.out;
  const ProcessResult archive_ok = baton({"verify", "--archive", file});
  EXPECT_EQ(archive_ok.exit_code, 0) << archive_ok.err;
  EXPECT_NE(archive_ok.out.find("archive OK"), std::string::npos) << archive_ok.out;
}

}  // namespace
}  // namespace baton::testing
