// Boards and board templates (src/engine/coord/boards.h) through Api::Call, on an
// in-memory and a file store. Orphan repair and auto-advance reach under the
// API (a raw UPDATE, a direct engine call) and run on a file store only.

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "backend_test.h"
#include "engine/coord/boards.h"
#include "test_util.h"
#include "util/clock.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;

const Actor kAdmin{"root", "admin"};

const std::vector<std::string> kSoftware = {"triage", "draft",  "brainstorm", "wish",
                                            "build",  "review", "qa",         "ship"};

std::vector<std::string> Names(const Json& columns) {
  std::vector<std::string> out;
  for (const Json& c : columns) out.push_back(c["name"].get<std::string>());
  return out;
}

class BoardTestBase {
 protected:
  void Open(const std::string& location) { api_ = testing::OpenApi(location); }

  Json NewBoard(const std::string& name, const Json& extra) {
    Json in = extra;
    in["name"] = name;
    return MustCall(*api_, "board.create", in);
  }

  Json NewTask(const std::string& title, const std::string& project = "") {
    Json in = {{"title", title}};
    if (!project.empty()) in["project"] = project;
    return MustCall(*api_, "task.create", in);
  }

  // A task on "board" in "column".
  std::string Card(const std::string& board, const std::string& column) {
    std::string id = NewTask("card")["id"];
    MustCall(*api_, "board.add_task", {{"board", board}, {"task", id}, {"column", column}});
    return id;
  }

  // The name of the column the task is in ("" when off the board or orphaned).
  std::string ColumnOfTask(const std::string& board, const std::string& task) {
    Json shown = MustCall(*api_, "board.show", {{"board", board}});
    for (const Json& c : shown["columns"]) {
      for (const Json& t : c["tasks"]) {
        if (t["id"] == task) return c["name"];
      }
    }
    return "";
  }

  void ExpectRefused(const std::string& op, const Json& input, StatusCode code,
                     const Actor& actor = Human()) {
    (void)Refused(op, input, code, actor);
  }

  // Calls "op" expecting "code"; checks the ledger did not grow.
  Status Refused(const std::string& op, const Json& input, StatusCode code,
                 const Actor& actor = Human()) {
    return testing::Refused(*api_, op, input, code, actor);
  }

  Json Events(const std::string& kind) {
    return MustCall(*api_, "ledger.events", {{"kind", kind}})["events"];
  }

  std::unique_ptr<Api> api_;
};

class BoardTest : public BoardTestBase, public testing::BackendTest {
 protected:
  void SetUp() override { api_ = OpenBackend(); }
};

TEST_P(BoardTest, TemplatesAreGeniesFiveBuiltinsWithTheirColumns) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"software", kSoftware},
      {"sales", {"lead", "qualified", "proposal", "negotiation", "closed-won", "closed-lost"}},
      {"hiring", {"sourcing", "screening", "interview", "offer", "hired"}},
      {"ops", {"identified", "planning", "in-progress", "done"}},
      {"bug", {"triage", "draft", "build", "review", "qa", "ship"}}};
  Json list = MustCall(*api_, "board.templates", Json::object())["templates"];
  ASSERT_EQ(list.size(), expected.size()) << list.dump();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(list[i]["name"], expected[i].first);
    EXPECT_EQ(list[i]["builtin"], true) << expected[i].first;
    EXPECT_EQ(Names(list[i]["columns"]), expected[i].second) << expected[i].first;
    for (size_t p = 0; p < list[i]["columns"].size(); ++p) {
      EXPECT_EQ(list[i]["columns"][p]["position"], p) << expected[i].first;
    }
  }
  Json software = MustCall(*api_, "board.template_show", {{"name", "software"}});
  std::vector<std::string> gates;
  for (const Json& c : software["columns"]) gates.push_back(c["gate"]);
  EXPECT_EQ(gates, (std::vector<std::string>{"agent", "human", "human+agent", "human", "agent",
                                             "human", "agent", "human"}));
  EXPECT_EQ(software["columns"][4]["action"], "/work");
  EXPECT_EQ(software["columns"][4]["auto_advance"], true);
  EXPECT_EQ(software["columns"][7]["action"], nullptr);
  Status s = Refused("board.template_show", {{"name", "kanban"}}, StatusCode::kNotFound);
  EXPECT_NE(s.message().find("software, sales, hiring, ops, bug"), std::string::npos)
      << s.message();
}

TEST_P(BoardTest, UserTemplatesAreValidatedListedAfterBuiltinsAndUsable) {
  ExpectRefused("board.template_create", {{"name", "software"}, {"columns", {"a"}}},
                StatusCode::kAlreadyExists);
  Status s =
      Refused("board.template_create", {{"name", "mine"}, {"columns", {"todo", "done", "todo"}}},
              StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("columns[2].name"), std::string::npos) << s.message();
  Json made = MustCall(*api_, "board.template_create",
                       {{"name", "mine"},
                        {"description", "two steps"},
                        {"columns", {"todo", {{"name", "done"}, {"gate", "human"}}}}});
  EXPECT_EQ(made["builtin"], false);
  EXPECT_EQ(Names(made["columns"]), (std::vector<std::string>{"todo", "done"}));
  ExpectRefused("board.template_create", {{"name", "mine"}, {"columns", {"x"}}},
                StatusCode::kAlreadyExists);
  Json list = MustCall(*api_, "board.templates", Json::object())["templates"];
  ASSERT_EQ(list.size(), 6u);
  EXPECT_EQ(list[5]["name"], "mine");
  Json board = NewBoard("b", {{"template", "mine"}});
  EXPECT_EQ(board["template"], "mine");
  EXPECT_EQ(board["columns"][1]["gate"], "human");
}

TEST_P(BoardTest, CreateFromTemplateCopiesColumnsWithFreshIds) {
  const int64_t before = LedgerLength(*api_);
  Json a = NewBoard("a", {{"template", "software"}, {"description", "delivery"}});
  Json b = NewBoard("b", {{"template", "software"}});
  EXPECT_EQ(LedgerLength(*api_), before + 2);
  EXPECT_EQ(Names(a["columns"]), kSoftware);
  EXPECT_EQ(a["description"], "delivery");
  EXPECT_EQ(a["project_id"], nullptr);
  std::set<std::string> ids;
  for (const Json* board : {&a, &b}) {
    for (const Json& c : (*board)["columns"]) {
      const std::string id = c["id"];
      EXPECT_EQ(id.rfind("col-", 0), 0u) << id;
      ids.insert(id);
    }
  }
  EXPECT_EQ(ids.size(), 2 * kSoftware.size()) << "column ids must be unique across boards";
  Json events = Events("board.created");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["payload"]["template"], "software");
  EXPECT_EQ(events[0]["payload"]["columns"], Json(kSoftware));
}

TEST_P(BoardTest, ExplicitColumnsGetDefaultsAndPositionsRenumbered) {
  Json board = NewBoard(
      "b",
      {{"columns",
        {{{"name", "late"}, {"position", 50}}, {{"name", "first"}, {"position", 0}}, "middle"}}});
  EXPECT_EQ(Names(board["columns"]), (std::vector<std::string>{"first", "middle", "late"}));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(board["columns"][i]["position"], i);
  const Json& middle = board["columns"][1];
  EXPECT_EQ(middle["label"], "middle");
  EXPECT_EQ(middle["gate"], "human+agent");
  EXPECT_EQ(middle["transitions"], Json::array());
  EXPECT_EQ(middle["auto_advance"], false);
}

TEST_P(BoardTest, BadColumnsAreRefusedNamingTheFieldAndChangeNothing) {
  const struct {
    Json input;
    StatusCode code;
    const char* mentions;
  } cases[] = {
      {{{"name", "b"}, {"columns", {"a", "a"}}}, StatusCode::kInvalidArgument, "columns[1].name"},
      {{{"name", "b"}, {"columns", {{{"name", "a"}, {"gate", "robot"}}}}},
       StatusCode::kInvalidArgument,
       "gate"},
      {{{"name", "b"},
        {"columns",
         {{{"name", "a"}, {"transitions", {{{"event", "go"}, {"target", "nowhere"}}}}}}}},
       StatusCode::kInvalidArgument,
       "columns[0].transitions[0].target: no column named \"nowhere\""},
      {{{"name", "b"}, {"columns", {{{"name", "a"}, {"on_fail", "zz"}}}}},
       StatusCode::kInvalidArgument,
       "columns[0].on_fail"},
      {{{"name", "b"}, {"columns", Json::array()}}, StatusCode::kInvalidArgument, "columns"},
      {{{"name", "b"}, {"template", "software"}, {"columns", {"a"}}},
       StatusCode::kInvalidArgument,
       "not both"},
      {{{"name", "b"}}, StatusCode::kInvalidArgument, "template"},
      {{{"name", "b"}, {"template", "kanban"}},
       StatusCode::kNotFound,
       "template: no board template"},
      {{{"name", "b"}, {"template", "software"}, {"project", "nope"}},
       StatusCode::kNotFound,
       "project"},
  };
  for (const auto& c : cases) {
    Status s = Refused("board.create", c.input, c.code);
    EXPECT_NE(s.message().find(c.mentions), std::string::npos)
        << c.input.dump() << " -> " << s.message();
  }
  EXPECT_EQ(MustCall(*api_, "board.list", Json::object())["boards"].size(), 0u);
}

TEST_P(BoardTest, NamesAreUniquePerProject) {
  MustCall(*api_, "project.create", {{"name", "p1"}});
  MustCall(*api_, "project.create", {{"name", "p2"}});
  Json first = NewBoard("ship-it", {{"template", "bug"}, {"project", "p1"}});
  Status s = Refused("board.create", {{"name", "ship-it"}, {"template", "ops"}, {"project", "p1"}},
                     StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("\"ship-it\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(first["id"].get<std::string>()), std::string::npos) << s.message();
  NewBoard("ship-it", {{"template", "ops"}, {"project", "p2"}});
  NewBoard("ship-it", {{"template", "ops"}});
  ExpectRefused("board.create", {{"name", "ship-it"}, {"template", "ops"}},
                StatusCode::kAlreadyExists);
  EXPECT_EQ(MustCall(*api_, "board.list", {{"project", "p1"}})["boards"].size(), 1u);
  EXPECT_EQ(MustCall(*api_, "board.list", Json::object())["boards"].size(), 3u);
  // A name used in several projects needs the project (or the id).
  Status ambiguous = Refused("board.show", {{"board", "ship-it"}}, StatusCode::kInvalidArgument);
  EXPECT_NE(ambiguous.message().find("pass project"), std::string::npos) << ambiguous.message();
  EXPECT_EQ(MustCall(*api_, "board.show", {{"board", "ship-it"}, {"project", "p1"}})["id"],
            first["id"]);
  EXPECT_EQ(MustCall(*api_, "board.show", {{"board", first["id"]}})["id"], first["id"]);
}

TEST_P(BoardTest, ShowListsTheTasksOfEachColumn) {
  NewBoard("b", {{"template", "software"}});
  const std::string t1 = Card("b", "review");
  const std::string t2 = NewTask("second")["id"];
  Json placed = MustCall(*api_, "board.add_task", {{"board", "b"}, {"task", t2}});
  EXPECT_EQ(placed["column"], "triage");
  EXPECT_EQ(placed["task"]["board_id"], placed["board"]["id"]);
  Json shown = MustCall(*api_, "board.show", {{"board", "b"}});
  EXPECT_EQ(shown["columns"][0]["tasks"].size(), 1u);
  EXPECT_EQ(shown["columns"][0]["tasks"][0]["id"], t2);
  EXPECT_EQ(shown["columns"][0]["tasks"][0]["title"], "second");
  EXPECT_EQ(shown["columns"][5]["tasks"][0]["id"], t1);
  EXPECT_EQ(shown["columns"][5]["tasks"][0]["status"], "ready");
  EXPECT_EQ(shown["orphaned"], Json::array());
  EXPECT_EQ(MustCall(*api_, "board.list", Json::object())["boards"][0]["task_count"], 2);
  // A task is on one board at a time.
  NewBoard("other", {{"template", "ops"}});
  ExpectRefused("board.add_task", {{"board", "other"}, {"task", t1}},
                StatusCode::kFailedPrecondition);
  ExpectRefused("board.add_task", {{"board", "b"}, {"task", t1}}, StatusCode::kFailedPrecondition);
  MustCall(*api_, "board.remove_task", {{"task", t1}});
  MustCall(*api_, "board.add_task", {{"board", "other"}, {"task", t1}});
  EXPECT_EQ(ColumnOfTask("other", t1), "identified");
}

TEST_P(BoardTest, TaskOfAnotherProjectIsRefused) {
  MustCall(*api_, "project.create", {{"name", "p1"}});
  Json p2 = MustCall(*api_, "project.create", {{"name", "p2"}});
  Json board = NewBoard("b", {{"template", "software"}, {"project", "p1"}});
  Json task = NewTask("elsewhere", "p2");
  Status s = Refused("board.add_task", {{"board", "b"}, {"task", task["id"]}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("task " + task["id"].get<std::string>() + " belongs to project " +
                             p2["id"].get<std::string>() + ", board b to project " +
                             board["project_id"].get<std::string>()),
            std::string::npos)
      << s.message();
  Json unscoped = NewTask("nowhere");
  ExpectRefused("board.add_task", {{"board", "b"}, {"task", unscoped["id"]}},
                StatusCode::kFailedPrecondition);
  EXPECT_EQ(MustCall(*api_, "task.show", {{"id", task["id"]}})["board_id"], nullptr);
  // A board without a project takes any task.
  NewBoard("global", {{"template", "ops"}});
  MustCall(*api_, "board.add_task", {{"board", "global"}, {"task", task["id"]}});
}

TEST_P(BoardTest, GatesDecideWhoMayMoveACardOutOfAColumn) {
  NewBoard("b", {{"template", "software"}});
  // draft is human-gated, build agent-gated, brainstorm human+agent. Only a
  // human may take a card out of a human gate; a human may take any card on.
  const struct {
    const char* from;
    Actor actor;
    bool allowed;
  } cases[] = {
      {"draft", Agent(), false},      {"draft", Coordinator(), false},
      {"draft", Human(), true},       {"draft", kAdmin, true},
      {"build", Human(), true},       {"build", Agent(), true},
      {"build", Coordinator(), true}, {"brainstorm", Agent(), true},
      {"brainstorm", Human(), true},  {"triage", Human(), true},
  };
  for (const auto& c : cases) {
    const std::string task = Card("b", c.from);
    const Json before = MustCall(*api_, "task.show", {{"id", task}});
    Json in = {{"task", task}, {"column", "ship"}};
    if (c.allowed) {
      Json moved = MustCall(*api_, "board.move", in, c.actor);
      EXPECT_EQ(moved["moved"], true) << c.from << " " << c.actor.role;
      EXPECT_EQ(ColumnOfTask("b", task), "ship") << c.from << " " << c.actor.role;
      continue;
    }
    Status s = Refused("board.move", in, StatusCode::kPermissionDenied, c.actor);
    const std::string gate = s.details().value("gate", "");
    EXPECT_EQ(gate, "human") << c.from;
    for (const std::string& word : {std::string("column \"") + c.from + "\"", "gate " + gate,
                                    "caller's role: " + c.actor.role}) {
      EXPECT_NE(s.message().find(word), std::string::npos) << s.message();
    }
    EXPECT_EQ(s.details()["column"], c.from);
    EXPECT_EQ(s.details()["role"], c.actor.role);
    EXPECT_EQ(MustCall(*api_, "task.show", {{"id", task}}), before)
        << "a refused move changed the task";
  }
}

TEST_P(BoardTest, MoveRecordsTheLedgerAndSameColumnIsANoOp) {
  Json board = NewBoard("b", {{"template", "software"}});
  const std::string task = Card("b", "review");
  const int64_t version = MustCall(*api_, "task.show", {{"id", task}})["version"];
  Json same = MustCall(*api_, "board.move", {{"task", task}, {"column", "review"}}, Agent());
  EXPECT_EQ(same["moved"], false);
  EXPECT_EQ(same["task"]["version"], version);
  EXPECT_EQ(Events("board.moved").size(), 0u);
  // By column id too, with a note.
  const std::string qa_id = board["columns"][6]["id"];
  Json moved =
      MustCall(*api_, "board.move", {{"task", task}, {"column", qa_id}, {"note", "looks good"}});
  EXPECT_EQ(moved["from"], "review");
  EXPECT_EQ(moved["to"], "qa");
  EXPECT_EQ(moved["task"]["board_column"], qa_id);
  EXPECT_EQ(moved["task"]["version"], version + 1);
  Json events = Events("board.moved");
  ASSERT_EQ(events.size(), 1u);
  const Json& p = events[0]["payload"];
  EXPECT_EQ(p["task_id"], task);
  EXPECT_EQ(p["board"], "b");
  EXPECT_EQ(p["board_id"], board["id"]);
  EXPECT_EQ(p["from"], "review");
  EXPECT_EQ(p["to"], "qa");
  EXPECT_EQ(p["note"], "looks good");
  EXPECT_EQ(events[0]["actor"]["role"], "human");
  // expect_version is the task's.
  ExpectRefused("board.move", {{"task", task}, {"column", "ship"}, {"expect_version", version}},
                StatusCode::kAborted, Agent());
}

TEST_P(BoardTest, UnknownColumnIsNamedWithTheBoardsColumns) {
  NewBoard("ship-it", {{"template", "software"}});
  const std::string task = Card("ship-it", "build");
  Status s = Refused("board.move", {{"task", task}, {"column", "revew"}},
                     StatusCode::kInvalidArgument, Agent());
  EXPECT_EQ(s.message(),
            "column: board \"ship-it\" has no column \"revew\" (columns: triage, draft, "
            "brainstorm, wish, build, review, qa, ship)");
  const std::string loose = NewTask("loose")["id"];
  ExpectRefused("board.move", {{"task", loose}, {"column", "build"}},
                StatusCode::kFailedPrecondition);
}

TEST_P(BoardTest, TransitionsAreEnforcedWhenAColumnDefinesThem) {
  NewBoard("flow",
           {{"columns",
             {{{"name", "open"}, {"transitions", {{{"event", "start"}, {"target", "doing"}}}}},
              "doing",
              "done"}}});
  const std::string task = Card("flow", "open");
  Status s =
      Refused("board.move", {{"task", task}, {"column", "done"}}, StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("\"open\""), std::string::npos) << s.message();
  EXPECT_EQ(s.details()["allowed"], Json::array({"doing"}));
  EXPECT_EQ(ColumnOfTask("flow", task), "open");
  MustCall(*api_, "board.move", {{"task", task}, {"column", "doing"}});
  // No transitions: free movement, backwards too.
  MustCall(*api_, "board.move", {{"task", task}, {"column", "open"}});
  EXPECT_EQ(ColumnOfTask("flow", task), "open");
}

TEST_P(BoardTest, EditColumnChangesRulesAndCarriesRenames) {
  Json board = NewBoard(
      "flow", {{"columns",
                {{{"name", "open"}, {"transitions", {{{"event", "start"}, {"target", "doing"}}}}},
                 "doing",
                 "done"}}});
  Json edited = MustCall(*api_, "board.edit_column",
                         {{"board", "flow"},
                          {"column", "doing"},
                          {"name", "wip"},
                          {"gate", "human"},
                          {"label", "In progress"},
                          {"action", "/work"}});
  EXPECT_EQ(edited["version"], 2);
  EXPECT_EQ(Names(edited["columns"]), (std::vector<std::string>{"open", "wip", "done"}));
  EXPECT_EQ(edited["columns"][1]["id"], board["columns"][1]["id"]) << "ids survive edits";
  EXPECT_EQ(edited["columns"][0]["transitions"][0]["target"], "wip");
  EXPECT_EQ(edited["columns"][1]["label"], "In progress");
  const std::string task = Card("flow", "wip");
  ExpectRefused("board.move", {{"task", task}, {"column", "done"}}, StatusCode::kPermissionDenied,
                Agent());
  ExpectRefused("board.edit_column", {{"board", "flow"}, {"column", "wip"}, {"name", "done"}},
                StatusCode::kInvalidArgument);
  Status nothing = Refused("board.edit_column", {{"board", "flow"}, {"column", "wip"}},
                           StatusCode::kInvalidArgument);
  EXPECT_NE(nothing.message().find("nothing to change"), std::string::npos);
  Status bad =
      Refused("board.edit_column", {{"board", "flow"}, {"column", "wip"}, {"on_fail", "x"}},
              StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message().rfind("on_fail: ", 0), 0u) << bad.message();
  ExpectRefused("board.edit_column",
                {{"board", "flow"}, {"column", "wip"}, {"gate", "agent"}, {"expect_version", 1}},
                StatusCode::kAborted);
  Json moved = MustCall(*api_, "board.edit_column",
                        {{"board", "flow"}, {"column", "done"}, {"position", 0}});
  EXPECT_EQ(Names(moved["columns"]), (std::vector<std::string>{"done", "open", "wip"}));
}

TEST_P(BoardTest, DeleteIsRefusedWhileTasksAreOnItUnlessForced) {
  NewBoard("b", {{"template", "ops"}});
  const std::string task = Card("b", "planning");
  Status s = Refused("board.delete", {{"board", "b"}}, StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find(task), std::string::npos) << s.message();
  ExpectRefused("board.delete", {{"board", "b"}}, StatusCode::kPermissionDenied, Agent());
  Json deleted = MustCall(*api_, "board.delete", {{"board", "b"}, {"force", true}});
  EXPECT_EQ(deleted["cleared_tasks"], Json::array({task}));
  Json t = MustCall(*api_, "task.show", {{"id", task}});
  EXPECT_EQ(t["board_id"], nullptr);
  EXPECT_EQ(t["board_column"], nullptr);
  ExpectRefused("board.show", {{"board", "b"}}, StatusCode::kNotFound);
  NewBoard("b", {{"template", "ops"}});  // the name is free again
}

TEST_P(BoardTest, ExportImportRoundTripKeepsColumns) {
  NewBoard("src", {{"columns",
                    {{{"name", "open"},
                      {"gate", "human"},
                      {"color", "#fff"},
                      {"transitions", {{{"event", "start"}, {"target", "doing"}}}}},
                     {{"name", "doing"}, {"auto_advance", true}, {"action", "/work"}},
                     "done"}},
                   {"description", "d"}});
  Card("src", "doing");
  Json doc = MustCall(*api_, "board.export", {{"board", "src"}});
  EXPECT_EQ(doc["schemaVersion"], 1);
  ASSERT_EQ(doc["tasks"].size(), 1u);
  EXPECT_EQ(doc["tasks"][0]["column"], "doing");
  Json in = doc;
  in["name"] = "copy";
  Json copy = MustCall(*api_, "board.import", in);
  EXPECT_EQ(copy["tasks_not_imported"], 1);
  EXPECT_EQ(copy["description"], "d");
  ASSERT_EQ(copy["columns"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    Json a = doc["board"]["columns"][i];
    Json b = copy["columns"][i];
    EXPECT_NE(a["id"], b["id"]) << "imported columns get new ids";
    a.erase("id");
    b.erase("id");
    EXPECT_EQ(a, b) << i;
  }
  EXPECT_EQ(MustCall(*api_, "board.show", {{"board", "copy"}})["columns"][1]["tasks"].size(), 0u);
  ExpectRefused("board.import", doc, StatusCode::kAlreadyExists);  // same name "src"
  Json v2 = doc;
  v2["schemaVersion"] = 2;
  v2["name"] = "v2";
  Status s = Refused("board.import", v2, StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("schemaVersion: ", 0), 0u) << s.message();
  Json broken = doc;
  broken["name"] = "broken";
  broken["board"]["columns"][0]["gate"] = "robot";
  Status g = Refused("board.import", broken, StatusCode::kInvalidArgument);
  EXPECT_NE(g.message().find("board.columns[0].gate"), std::string::npos) << g.message();
}

TEST_P(BoardTest, OperationRolesAreEnforced) {
  ExpectRefused("board.create", {{"name", "b"}, {"template", "ops"}}, StatusCode::kPermissionDenied,
                Agent());
  ExpectRefused("board.template_create", {{"name", "t"}, {"columns", {"a"}}},
                StatusCode::kPermissionDenied, Agent());
  NewBoard("b", {{"template", "ops"}});
  MustCall(*api_, "board.show", {{"board", "b"}}, Agent());
}

BATON_INSTANTIATE_BACKENDS(BoardTest);

// Tests that reach the store directly, so they need a file both sides open.
class BoardStoreTest : public BoardTestBase, public ::testing::Test {
 protected:
  void SetUp() override { Open(dir_.File("baton.db")); }

  testing::TempDir dir_;

  // Runs "fn" in a write transaction of a second connection to the store,
  // as "actor", and commits.
  void InStore(const Actor& actor, const std::function<Status(OpContext&)>& fn) {
    StoreOptions options;
    options.location = testing::TestStoreLocation(dir_.File("baton.db"));
    Result<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::unique_ptr<Connection>> conn = (*store)->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    Result<std::unique_ptr<Txn>> txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    const int64_t now = NowMillis();
    OpContext ctx{**txn, actor, api_->machines(), "test", FormatTime(now), now, nullptr};
    Status s = fn(ctx);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Status committed = (*txn)->Commit();
    ASSERT_TRUE(committed.ok()) << committed.ToString();
  }

  void SetColumnRaw(const std::string& task, const SqlValue& value) {
    InStore(kAdmin, [&](OpContext& ctx) {
      return ctx.txn.Exec("UPDATE tasks SET board_column = ? WHERE id = ?", {value, SqlText(task)})
          .status();
    });
  }
};

TEST_F(BoardStoreTest, ReconcileRepairsOrphanedColumnReferences) {
  NewBoard("b", {{"template", "software"}});
  const std::string by_name = Card("b", "build");
  const std::string lost = Card("b", "build");
  const std::string null_column = Card("b", "build");
  const std::string fine = Card("b", "qa");
  // As a store written by an older tool, or a column dropped by hand.
  SetColumnRaw(by_name, SqlText("review"));
  SetColumnRaw(lost, SqlText("col-000000000000"));
  SetColumnRaw(null_column, SqlNull());
  Json shown = MustCall(*api_, "board.show", {{"board", "b"}});
  EXPECT_EQ(shown["orphaned"].size(), 3u) << shown["orphaned"].dump();
  Status s = Refused("board.move", {{"task", lost}, {"column", "ship"}},
                     StatusCode::kFailedPrecondition, kAdmin);
  EXPECT_NE(s.message().find("board.reconcile"), std::string::npos) << s.message();

  const int64_t before = LedgerLength(*api_);
  Json result = MustCall(*api_, "board.reconcile", {{"board", "b"}});
  ASSERT_EQ(result["repaired"].size(), 3u) << result.dump();
  EXPECT_EQ(LedgerLength(*api_), before + 3);
  std::map<std::string, Json> by_task;
  for (const Json& r : result["repaired"]) by_task[r["task"]] = r;
  EXPECT_EQ(by_task[by_name]["to"], "review");
  EXPECT_EQ(by_task[by_name]["reason"], "matched by name");
  EXPECT_EQ(by_task[lost]["to"], "triage");
  EXPECT_EQ(by_task[lost]["from"], "col-000000000000");
  EXPECT_EQ(by_task[null_column]["to"], "triage");
  EXPECT_EQ(by_task.count(fine), 0u);
  EXPECT_EQ(ColumnOfTask("b", by_name), "review");
  EXPECT_EQ(ColumnOfTask("b", lost), "triage");
  EXPECT_EQ(ColumnOfTask("b", fine), "qa");
  EXPECT_EQ(Events("board.repaired").size(), 3u);
  EXPECT_EQ(MustCall(*api_, "board.reconcile", {{"board", "b"}})["repaired"].size(), 0u);
  EXPECT_EQ(LedgerLength(*api_), before + 3) << "a second reconcile has nothing to do";
}

TEST_F(BoardStoreTest, CompletionAdvancesCardsOutOfAutoAdvanceColumns) {
  NewBoard("b", {{"template", "software"}});
  const std::string build = Card("b", "build");      // auto_advance -> review
  const std::string review = Card("b", "review");    // no auto_advance
  const std::string loose = NewTask("loose")["id"];  // on no board
  const int64_t before = LedgerLength(*api_);
  InStore(Agent("finisher"), [&](OpContext& ctx) {
    RETURN_IF_ERROR(AdvanceOnCompletion(ctx, build));
    RETURN_IF_ERROR(AdvanceOnCompletion(ctx, review));
    return AdvanceOnCompletion(ctx, loose);
  });
  EXPECT_EQ(ColumnOfTask("b", build), "review");
  EXPECT_EQ(ColumnOfTask("b", review), "review");
  EXPECT_EQ(LedgerLength(*api_), before + 1);
  Json events = Events("board.moved");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["note"], "auto-advance");
  EXPECT_EQ(events[0]["payload"]["from"], "build");
  EXPECT_EQ(events[0]["payload"]["to"], "review");
  // An auto-advance column whose transitions exclude the next one stays put.
  NewBoard("flow", {{"columns",
                     {{{"name", "work"},
                       {"auto_advance", true},
                       {"transitions", {{{"event", "fail"}, {"target", "rework"}}}}},
                      "check",
                      "rework"}}});
  const std::string guarded = Card("flow", "work");
  InStore(Agent("finisher"), [&](OpContext& ctx) { return AdvanceOnCompletion(ctx, guarded); });
  EXPECT_EQ(ColumnOfTask("flow", guarded), "work");
}

TEST_F(BoardStoreTest, CompletingAClaimedTaskAdvancesItsCard) {
  NewBoard("b", {{"template", "software"}});
  const std::string build = Card("b", "build");
  MustCall(*api_, "agent.register", Json::object(), Agent("finisher"));
  Json claim = MustCall(*api_, "task.claim", {{"task", build}}, Agent("finisher"));
  MustCall(*api_, "task.complete", {{"task", build}, {"epoch", claim["lease"]["epoch"]}},
           Agent("finisher"));
  EXPECT_EQ(ColumnOfTask("b", build), "review");
}

TEST_F(BoardStoreTest, CliVerbsCreateAndShowBoards) {
  const std::string store = testing::InitStore(dir_.File("cli.db"));
  testing::ProcessResult made = testing::RunBaton(
      {"--store", store, "board", "create", "b", "--columns", "todo", "--columns", "done"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  testing::ProcessResult shown =
      testing::RunBaton({"--store", store, "--output", "json", "board", "show", "b"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  Json board = Json::parse(shown.out);
  EXPECT_EQ(Names(board["columns"]), (std::vector<std::string>{"todo", "done"}));
}

}  // namespace
}  // namespace baton
