#include "pg_test_db.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <random>
#include <vector>

#include "store/migrations/migrations.h"
#include "store/store.h"

namespace baton::testing {
namespace {

// Both sides of the template: made under this advisory lock, cloned under it
// (PostgreSQL refuses to copy a database someone is connected to).
constexpr char kLock[] = "4242";

std::string Server() {
  const char* server = std::getenv("BATON_TEST_PG");
  return server != nullptr ? server : BATON_TEST_PG_DEFAULT;
}

[[noreturn]] void Fail(const std::string& what) {
  ADD_FAILURE() << "PostgreSQL test database: " << what;
  std::abort();
}

void Exec(PGconn* conn, const std::string& sql) {
  PGresult* res = PQexec(conn, sql.c_str());
  const ExecStatusType st = PQresultStatus(res);
  std::string error = PQresultErrorMessage(res);
  PQclear(res);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) Fail(sql + ": " + error);
}

bool Exists(PGconn* conn, const std::string& database) {
  PGresult* res = PQexec(conn, ("SELECT 1 FROM pg_database WHERE datname = '" + database + "'").c_str());
  const bool found = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
  PQclear(res);
  return found;
}

PGconn* Connect(const std::string& database) {
  PGconn* conn = PQconnectdb((Server() + " dbname=" + database).c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string error = PQerrorMessage(conn);
    PQfinish(conn);
    Fail("cannot connect to " + Server() + " (is CTest's fixture \"postgres\" running?): " + error);
  }
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return conn;
}

// The databases this process made, dropped when it exits (not when a child
// forked from it does: its copy of the list names the parent's).
class Made {
 public:
  ~Made() {
    if (names_.empty() || getpid() != maker_) return;
    PGconn* conn = PQconnectdb((Server() + " dbname=postgres").c_str());
    for (const std::string& name : names_) {
      PQclear(PQexec(conn, ("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").c_str()));
    }
    PQfinish(conn);
  }
  void Add(std::string name) {
    std::lock_guard<std::mutex> lock(mu_);
    names_.push_back(std::move(name));
  }

 private:
  std::mutex mu_;
  std::vector<std::string> names_;
  const pid_t maker_ = getpid();
};

Made& MadeHere() {
  static Made made;
  return made;
}

// The template of this schema version, made if the server has none.
std::string Template(PGconn* admin) {
  const std::string name = "baton_template_v" + std::to_string(LatestSchemaVersion());
  if (Exists(admin, name)) return name;
  const std::string building = name + "_building";
  Exec(admin, "DROP DATABASE IF EXISTS " + building + " WITH (FORCE)");
  Exec(admin, "CREATE DATABASE " + building);
  {
    StoreOptions options;
    options.location = Server() + " dbname=" + building;
    Result<std::unique_ptr<Store>> store = Store::Open(options);
    if (!store.ok()) Fail("migrating the template: " + store.status().ToString());
  }
  Exec(admin, "ALTER DATABASE " + building + " RENAME TO " + name);
  return name;
}

// A new database, a copy of the template when "migrated", dropped at exit.
std::string NewDatabase(bool migrated) {
  // The pid and a random part: processes of other machines or containers
  // may share the server, and a pid comes back after a crash.
  static std::atomic<int> counter{0};
  static const unsigned salt = std::random_device{}();
  const std::string name = "t_" + std::to_string(getpid()) + "_" + std::to_string(salt) + "_" +
                           std::to_string(counter.fetch_add(1));
  PGconn* admin = Connect("postgres");
  if (migrated) {
    Exec(admin, std::string("SELECT pg_advisory_lock(") + kLock + ")");
    Exec(admin, "CREATE DATABASE " + name + " TEMPLATE " + Template(admin));
    Exec(admin, std::string("SELECT pg_advisory_unlock(") + kLock + ")");
  } else {
    Exec(admin, "CREATE DATABASE " + name);
  }
  PQfinish(admin);
  MadeHere().Add(name);
  return Server() + " dbname=" + name;
}

}  // namespace

std::string NewPostgresStore() { return NewDatabase(/*migrated=*/true); }

std::string NewEmptyPostgresDatabase() { return NewDatabase(/*migrated=*/false); }

void DropEveryConnection(const std::string& location) {
  PGconn* conn = PQconnectdb(location.c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* res = PQexec(conn,
                         "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                         "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << PQresultErrorMessage(res);
  EXPECT_GT(std::atoi(PQgetvalue(res, 0, 0)), 0) << "baton had no connection to drop";
  PQclear(res);
  PQfinish(conn);
}

}  // namespace baton::testing
