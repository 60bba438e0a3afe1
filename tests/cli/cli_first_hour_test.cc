// Issue 17, the first hour at a terminal: a store that is found, not
// guessed; what the CLI says about itself and about a mistyped word; and
// whether its exit status tells a script the truth.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "baton/error_table.h"
#include "test_util.h"

namespace baton::testing {
namespace {

class CliFirstHourTest : public ::testing::Test {
 protected:
  TempDir dir_;
  const std::string store_ = InitStore(dir_.File("baton.db"));
};

TEST_F(CliFirstHourTest, VersionSaysTheVersionAndTheCommit) {
  ProcessResult r = RunBaton({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("baton 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
}

TEST_F(CliFirstHourTest, AGraphRunThatEndsFailedExitsWithItsOwnCode) {
  const std::string file = dir_.File("failing.yaml");
  std::ofstream(file) << "id: failing\nnodes:\n  - name: A\n    type: eval\n"
                         "    code: \"context.x = 1\"\n    then: ERROR\n";
  ProcessResult r = RunBaton({"--store", store_, "graph", "run", file, "--id", "f"});
  EXPECT_EQ(r.exit_code, kRunFailedExitCode) << r.out << r.err;
  EXPECT_NE(r.out.find("run f: failed"), std::string::npos) << r.out;
  ProcessResult again = RunBaton({"--store", store_, "graph", "resume", "f"});
  EXPECT_NE(again.exit_code, 0) << again.out << again.err;  // refused or failed: never 0

  const std::string good = dir_.File("good.yaml");
  std::ofstream(good) << "id: good\nnodes:\n  - name: A\n    type: eval\n"
                         "    code: \"context.x = 1\"\n    then: END\n";
  ProcessResult ok = RunBaton({"--store", store_, "graph", "run", good, "--id", "g"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST_F(CliFirstHourTest, AGraphRunSaysEachNodeAndHowToAnswerTheHuman) {
  const std::string file = dir_.File("ask.yaml");
  std::ofstream(file) << "id: ask\nnodes:\n  - name: Plan\n    type: eval\n"
                         "    code: \"context.x = 1\"\n    then: Ship\n"
                         "  - name: Ship\n    type: human\n    question: \"ship it?\"\n"
                         "    choices: [\"yes\", \"no\"]\n    then: END\n";
  ProcessResult r = RunBaton({"--store", store_, "graph", "run", file, "--id", "a",
                              "--wait-for-human=false"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("#1 Plan: ok ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-> Ship"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("#2 Ship: waiting for the human to answer question "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("baton question answer "), std::string::npos) << r.err;
  // Scripts reading JSON get no progress lines.
  ProcessResult quiet = RunBaton({"--store", store_, "--output", "json", "graph", "run", file,
                                  "--id", "b", "--wait-for-human=false"});
  EXPECT_EQ(quiet.err, "");
}

TEST_F(CliFirstHourTest, ExportIntoAMissingFolderNamesTheFolderAndCreatesNothing) {
  ProcessResult created = RunBaton({"--store", store_, "--output", "json", "run", "create",
                                    "--profile", "sgai", "--title", "t"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string run = Json::parse(created.out)["id"];
  const std::string missing = dir_.File("no/such/folder/state.json");
  ProcessResult r = RunBaton({"--store", store_, "export", "--format", "sgai", "--run", run, "-o",
                              missing});
  EXPECT_EQ(r.exit_code, MappingFor(StatusCode::kNotFound).exit_code) << r.err;
  EXPECT_NE(r.err.find("no folder " + dir_.File("no/such/folder")), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Internal"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(dir_.File("no")).good());
}

TEST_F(CliFirstHourTest, LogSaysWhenItCutTheOutputAndHowToReadOn) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(RunBaton({"--store", store_, "run", "create", "--profile", "sgai"}).exit_code, 0);
  }
  ProcessResult cut = RunBaton({"--store", store_, "log", "--limit", "2"});
  EXPECT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_NE(cut.err.find("showing 2 events from seq 1; more may follow: baton log --since 2"),
            std::string::npos)
      << cut.err;
  ProcessResult all = RunBaton({"--store", store_, "log", "--limit", "10"});
  EXPECT_EQ(all.err, "");
}

TEST_F(CliFirstHourTest, OutputIdGivesAShellVariableJustTheId) {
  auto baton = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", store_});
    return RunBaton(args);
  };
  ProcessResult made = baton({"run", "create", "--title", "scripted", "--output", "id"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string run = made.out.substr(0, made.out.size() - 1);
  EXPECT_EQ(made.out, run + "\n");
  EXPECT_EQ(run.rfind("run-", 0), 0u) << made.out;
  EXPECT_EQ(made.err, "");
  EXPECT_EQ(baton({"run", "show", run, "--output", ".title"}).out, "scripted\n");
  EXPECT_EQ(baton({"run", "show", run, "--output", ".version"}).out, "1\n");

  // A result that carries its record: the record's id (task.claim, sgai.start).
  ASSERT_EQ(baton({"task", "create", "write it", "--run", run}).exit_code, 0);
  ProcessResult claimed = baton({"--agent", "ann", "task", "claim", "--run", run, "--output", "id"});
  EXPECT_EQ(claimed.exit_code, 0) << claimed.err;
  EXPECT_EQ(claimed.out.rfind("task-", 0), 0u) << claimed.out;
  // Nothing claimed: an empty variable, not an error.
  ProcessResult none = baton({"--agent", "bob", "task", "claim", "--run", run, "--output", "id"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "\n");

  // A field the result does not have: named, with the ones it has, and the
  // message says the operation was done (the run exists).
  ProcessResult missing = baton({"run", "create", "--title", "twice", "--output", ".nope"});
  EXPECT_EQ(missing.exit_code, MappingFor(StatusCode::kInvalidArgument).exit_code);
  EXPECT_NE(missing.err.find("--output .nope: run.create was done, but its result has no .nope (it "
                             "has .context"),
            std::string::npos)
      << missing.err;
  // A command that prints no single result says so rather than print text.
  ProcessResult log = baton({"log", "--output", "id"});
  EXPECT_EQ(log.exit_code, MappingFor(StatusCode::kInvalidArgument).exit_code);
  EXPECT_NE(log.err.find("baton log prints no single result"), std::string::npos) << log.err;
  EXPECT_EQ(log.out, "");
  ProcessResult bad = baton({"run", "list", "--output", "yaml"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("expected text, json, id or .FIELD"), std::string::npos) << bad.err;
}

// Issue 18: a file over the import limit is refused naming the file and its
// size, before it is read (a sparse 40 MiB file: nothing is read), and over
// the operation too, naming the source it was given.
TEST_F(CliFirstHourTest, AnImportTooLargeNamesTheFileAndItsSize) {
  const std::string big = dir_.File("state.json");
  std::filesystem::resize_file((std::ofstream(big), big), 40 << 20);
  ProcessResult r = RunBaton({"--store", store_, "import", "--format", "sgai", big});
  EXPECT_EQ(r.exit_code, MappingFor(StatusCode::kInvalidArgument).exit_code);
  EXPECT_NE(r.err.find("baton: InvalidArgument: " + big +
                       ": 40.0 MiB (41943040 bytes) is more than the 32.0 MiB an import reads"),
            std::string::npos)
      << r.err;

  // A loop of links is named, not a crash.
  const std::string loop = dir_.File("loop.json");
  std::filesystem::create_symlink(loop, loop);
  ProcessResult looped = RunBaton({"--store", store_, "import", "--format", "sgai", loop});
  EXPECT_EQ(looped.exit_code, MappingFor(StatusCode::kInvalidArgument).exit_code) << looped.err;
  EXPECT_EQ(looped.err.rfind("baton: InvalidArgument: " + loop + ": ", 0), 0u) << looped.err;

  // Standard input is read up to the limit, no further.
  ProcessResult piped = RunShell("head -c 200M /dev/zero | '" + BatonBin() + "' --store '" + store_ +
                                 "' import --format sgai -");
  EXPECT_EQ(piped.exit_code, MappingFor(StatusCode::kInvalidArgument).exit_code);
  EXPECT_NE(piped.err.find("<stdin>: more than the 32 MiB an import reads"), std::string::npos)
      << piped.err;

  const std::string body = "{\"status\":\"" + std::string((32 << 20) + 1, 'x') + "\"}";
  std::unique_ptr<Api> api = OpenApi(store_);
  Result<Json> over = api->Call("run.import", {{"format", "sgai"}, {"content", body},
                                              {"source", "team/.sgai/state.json"}},
                                Human());
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message().rfind("team/.sgai/state.json: 32.0 MiB", 0), 0u)
      << over.status().message();
  EXPECT_EQ(MustCall(*api, "run.list", Json::object(), Human())["runs"].size(), 0u);
}

// `baton ARGS` run in "folder" as a user types it there, with no store
// named by the environment.
ProcessResult BatonIn(const std::string& folder, const std::string& args) {
  return RunShell("cd '" + folder + "' && env -u BATON_STORE '" + BatonBin() + "' " + args);
}

TEST_F(CliFirstHourTest, InitMakesAStoreThatEveryFolderBelowFinds) {
  const std::string project = dir_.File("project");
  std::filesystem::create_directories(project + "/src/deep");
  ProcessResult init = BatonIn(project, "init");
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_NE(init.out.find("Made a baton store at " + project + "/.baton/baton.db"),
            std::string::npos)
      << init.out;
  EXPECT_NE(init.out.find("baton serve"), std::string::npos) << "it says what to do next";
  EXPECT_TRUE(std::ifstream(project + "/.baton/.gitignore").good()) << "the store stays uncommitted";

  // An agent started in a subfolder uses the project's store, not a new one.
  ProcessResult made = BatonIn(project + "/src/deep", "--output json run create --title found");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_FALSE(std::filesystem::exists(project + "/src/deep/.baton"));
  ProcessResult listed = BatonIn(project, "run list");
  EXPECT_NE(listed.out.find("found"), std::string::npos) << listed.out;

  ProcessResult again = BatonIn(project, "init");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already"), std::string::npos) << again.out;
}

TEST_F(CliFirstHourTest, WithoutAStoreCommandsRefuseAndCreateNothing) {
  const std::string empty = dir_.File("empty");
  std::filesystem::create_directories(empty);
  ProcessResult r = BatonIn(empty, "run list");
  EXPECT_EQ(r.exit_code, MappingFor(StatusCode::kNotFound).exit_code) << r.err;
  EXPECT_NE(r.err.find("baton init"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(empty + "/.baton"));

  // A mistyped --store: neither the folder nor the file appears.
  ProcessResult typo_folder = BatonIn(empty, "--store " + empty + "/tpyo/baton.db run list");
  EXPECT_EQ(typo_folder.exit_code, MappingFor(StatusCode::kNotFound).exit_code);
  EXPECT_NE(typo_folder.err.find("folder " + empty + "/tpyo does not exist"), std::string::npos)
      << typo_folder.err;
  ProcessResult typo_file = BatonIn(empty, "--store " + empty + "/baotn.db run list");
  EXPECT_EQ(typo_file.exit_code, MappingFor(StatusCode::kNotFound).exit_code);
  EXPECT_NE(typo_file.err.find("no baton store there"), std::string::npos) << typo_file.err;
  EXPECT_TRUE(std::filesystem::is_empty(empty)) << "a refused command made something";

  // A store above that belongs to someone else is not this user's store:
  // anyone could plant /tmp/.baton (needs root to make one of another uid).
  const std::string shared = dir_.File("shared");
  std::filesystem::create_directories(shared + "/mine");
  if (::geteuid() == 0 && BatonIn(shared, "init").exit_code == 0 &&
      RunShell("chown -R 65534 '" + shared + "/.baton'").exit_code == 0) {
    ProcessResult planted = BatonIn(shared + "/mine", "run list");
    EXPECT_EQ(planted.exit_code, MappingFor(StatusCode::kNotFound).exit_code) << planted.out;
    EXPECT_NE(planted.err.find("belongs to another user"), std::string::npos) << planted.err;
  }

  // Not even serve makes a missing folder.
  ProcessResult serve = BatonIn(empty, "--store " + empty + "/tpyo/baton.db serve --listen "
                                       "127.0.0.1:0");
  EXPECT_EQ(serve.exit_code, MappingFor(StatusCode::kNotFound).exit_code) << serve.err;
  EXPECT_TRUE(std::filesystem::is_empty(empty));
}

TEST_F(CliFirstHourTest, AMistypedWordOrFlagGetsTheNearestOnes) {
  ProcessResult verb = RunBaton({"--store", store_, "rn", "list"});
  EXPECT_EQ(verb.exit_code, kUsageExitCode);
  EXPECT_NE(verb.err.find("did you mean run?"), std::string::npos) << verb.err;
  ProcessResult sub = RunBaton({"--store", store_, "run", "lsit"});
  EXPECT_EQ(sub.exit_code, kUsageExitCode);
  EXPECT_NE(sub.err.find("baton run has no command \"lsit\"; did you mean list?"),
            std::string::npos)
      << sub.err;
  ProcessResult flag = RunBaton({"--store", store_, "run", "create", "--titel", "x"});
  EXPECT_EQ(flag.exit_code, kUsageExitCode);
  EXPECT_NE(flag.err.find("did you mean --title?"), std::string::npos) << flag.err;
}

TEST_F(CliFirstHourTest, AnAgentsFirstCallRegistersItAndAnEmptyClaimSaysWhy) {
  ProcessResult made = RunBaton({"--store", store_, "--output", "json", "run", "create", "--id",
                                 "run-1", "--title", "t"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_EQ(RunBaton({"--store", store_, "task", "create", "--run", "run-1", "--id", "task-a",
                      "--title", "a"})
                .exit_code,
            0);
  // Never registered by hand: the claim itself registers the agent.
  ProcessResult first = RunBaton({"--store", store_, "--agent", "coder", "--output", "json",
                                  "task", "claim", "--run", "run-1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Json::parse(first.out)["claimed"], true) << first.out;
  ProcessResult second = RunBaton({"--store", store_, "--agent", "reviewer", "--output", "json",
                                   "task", "claim", "--run", "run-1"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const Json none = Json::parse(second.out);
  EXPECT_EQ(none["claimed"], false);
  const std::string reason = none.value("reason", "");
  EXPECT_NE(reason.find("no task is ready for reviewer in run run-1 (1 in_progress)"),
            std::string::npos)
      << reason;
  // A wait may be the first call too: nothing can have been sent to an
  // agent not registered yet, so it waits on an empty inbox.
  ProcessResult waited = RunBaton({"--store", store_, "--agent", "waiter", "--output", "json",
                                   "mail", "wait", "--timeout-ms", "10"});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_NE(waited.out.find("\"timed_out\": true"), std::string::npos) << waited.out;
  ProcessResult agents = RunBaton({"--store", store_, "agent", "list"});
  EXPECT_NE(agents.out.find("coder"), std::string::npos) << agents.out;
  EXPECT_NE(agents.out.find("reviewer"), std::string::npos) << agents.out;
}

// A command builds only its own verb (issue 21 item 4), yet every help
// still lists everything, and options stand where people put them.
TEST_F(CliFirstHourTest, HelpListsEveryGroupAndVerbThoughACommandBuildsOnlyItsOwn) {
  ProcessResult top = RunBaton({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* group : {"agent", "board", "graph", "mail", "run", "sgai", "task", "wish"}) {
    EXPECT_NE(top.out.find("\n  " + std::string(group) + " "), std::string::npos) << group;
  }
  ProcessResult run_help = RunBaton({"run", "--help"});
  EXPECT_EQ(run_help.exit_code, 0);
  // run.* comes from three families: the core, the formats and the inbox.
  for (const char* verb : {"create", "add-progress", "export", "usage"}) {
    EXPECT_NE(run_help.out.find("\n  " + std::string(verb) + " "), std::string::npos)
        << verb << "\n" << run_help.out;
  }
  ProcessResult made = RunBaton({"--store", store_, "run", "--output", "id", "create",
                                 "--title", "options between the words"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string run = made.out.substr(0, made.out.find('\n'));
  ProcessResult noted =
      RunBaton({"--agent", "coder", "run", "add-progress", run, "a note", "--store", store_});
  EXPECT_EQ(noted.exit_code, 0) << noted.err;
  ProcessResult shown = RunBaton({"--store", store_, "--output", "json", "run", "show", run});
  EXPECT_NE(shown.out.find("a note"), std::string::npos) << shown.out;
  // One command a line: a second one is refused, never run instead.
  for (const std::vector<std::string>& chained : std::vector<std::vector<std::string>>{
           {"--store", store_, "status", "task", "list"},
           {"--store", store_, "task", "list", "project", "list"}}) {
    ProcessResult refused = RunBaton(chained);
    EXPECT_EQ(refused.exit_code, kUsageExitCode) << refused.out;
    EXPECT_TRUE(refused.out.empty()) << refused.out;
  }
}

// libpq and what it brings (Kerberos, LDAP, GnuTLS) are loaded when a
// PostgreSQL store opens, never for a command on a SQLite store: mapping
// them was a fifth of such a command's CPU.
TEST_F(CliFirstHourTest, ACommandOnASqliteStoreNeverLoadsLibpq) {
  ProcessResult listed = RunBaton({"--store", store_, "run", "list"}, {"LD_DEBUG=libs"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  // The loader's trace is there (it names SQLite's library) ...
  EXPECT_NE(listed.err.find("libsqlite3.so"), std::string::npos) << listed.err.substr(0, 2000);
  // ... and never libpq's.
  EXPECT_EQ(listed.err.find("libpq.so"), std::string::npos);
}

// Help says what each flag takes, which ones are required, and shows the
// verb in use.
TEST_F(CliFirstHourTest, VerbHelpShowsTypesRequiredFlagsAndAnExample) {
  ProcessResult help = RunBaton({"run", "set-status", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--id ID "), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("REQUIRED: the new status"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--expect-version INT"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Example:\n  baton run set-status ID STATUS"), std::string::npos)
      << help.out;
}

// Completion made from the registry: a verb added tomorrow completes too.
TEST_F(CliFirstHourTest, BashCompletesGroupsVerbsAndFlagsFromTheRegistry) {
  auto complete = [](const std::string& words, int cword) {
    return RunShell("bash -c 'source <(\"" + BatonBin() + "\" completion bash) && COMP_WORDS=(" +
                    words + ") && COMP_CWORD=" + std::to_string(cword) +
                    " && _baton && echo \"${COMPREPLY[*]}\"'")
        .out;
  };
  EXPECT_EQ(complete("baton ru", 1), "run\n");
  EXPECT_EQ(complete("baton run cr", 2), "create\n");
  EXPECT_EQ(complete("baton --store x.db task cla", 4), "claim\n");
  EXPECT_NE(complete("baton run create --ti", 3).find("--title"), std::string::npos);
  for (const char* shell : {"zsh", "fish"}) {
    ProcessResult r = RunBaton({"completion", shell});
    EXPECT_EQ(r.exit_code, 0) << shell;
    EXPECT_NE(r.out.find("task claim"), std::string::npos) << shell;
  }
  EXPECT_EQ(RunBaton({"completion", "tcsh"}).exit_code, kUsageExitCode);
}

}  // namespace
}  // namespace baton::testing
