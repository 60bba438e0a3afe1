// Durable overhead per graph node, beside LangGraph.js with its SQLite
// checkpointer running the same chain in the same run (the machines are
// shared and noisy: only the ratios are meaningful).
//
//   build/bench/baton_graph_chain [--nodes N] [--rounds R] [--dir DIR]
//                                 [--langgraph PATH/chain.mjs]
//
// 1. Throughput: a chain of N no-op nodes (default 1000), run R times
//    (default 3) by each side in alternating rounds, each on a fresh store.
//    baton: `graph.run` through Api::Call as the CLI runs it (SQLite, WAL,
//    durability full: every checkpoint fsynced before the next node starts);
//    each node is an eval whose code does nothing. LangGraph.js: a
//    StateGraph of N nodes returning {} with a SqliteSaver on a file
//    (bench/langgraph/chain.mjs), whose SQLite runs at synchronous=NORMAL
//    (commits not fsynced). Reported: the median checkpointed nodes per
//    second of each, and baton's over LangGraph's — with baton fsyncing
//    every checkpoint, and again at durability normal, LangGraph's setting.
// 2. Storage: N nodes each appending one ~220-byte message to the
//    conversation (baton: conversationHistory from an eval; LangGraph: a
//    `messages` channel with a concat reducer). Reported: the database's
//    bytes on disk after the run (main file plus WAL), and LangGraph's over
//    baton's.
//
// 3. Growth (issue 21 item 3): the time of the first 100 nodes against the
//    last 100, in the storage run above (N nodes, +1 message each) and in a
//    200-node chain started with a 100 KB value in its state that each node
//    leaves alone (it sets a counter beside it); both sides, with the whole
//    run's time of each. baton's node times are its graph.node.completed
//    events' (ms); LangGraph's are when each node function began.
//
// LangGraph needs `(cd bench/langgraph && npm ci)` first. Prints a Markdown
// table for docs/benchmarks.md.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ops/api.h"
#include "util/clock.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Args {
  int nodes = 1000;
  int rounds = 3;
  std::string dir = "/tmp";
  std::string langgraph = std::string(BATON_SOURCE_DIR) + "/bench/langgraph/chain.mjs";
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_graph_chain: %s\n", what.c_str());
  std::exit(1);
}

enum class Work { kNoop, kHistory, kBigState };

// A chain n0 -> n1 -> ... -> END of eval nodes. kHistory: node i appends
// message i (the same text LangGraph's side appends); kBigState: node i sets
// a counter beside the 100 KB value the run was started with.
std::string Chain(int nodes, Work work) {
  std::string yaml = "id: chain\ninitialContext: {}\nnodes:\n";
  const std::string filler(200, 'x');
  for (int i = 0; i < nodes; ++i) {
    const std::string next = i + 1 < nodes ? "n" + std::to_string(i + 1) : "END";
    std::string code = "local _ = 0";
    if (work == Work::kBigState) code = "context.count = " + std::to_string(i + 1);
    if (work == Work::kHistory) {
      code = "table.insert(state.conversationHistory, {type = 'assistant', content = 'message " +
             std::to_string(i) + " " + filler + "', timestamp = os.date('!%Y-%m-%dT%H:%M:%SZ')})";
    }
    yaml += "  - {name: n" + std::to_string(i) + ", type: eval, code: \"" + code + "\", then: " +
            next + "}\n";
  }
  return yaml;
}

int64_t BytesOnDisk(const std::string& db) {
  int64_t total = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    const auto size = fs::file_size(db + suffix, ec);
    if (!ec) total += static_cast<int64_t>(size);
  }
  return total;
}

struct Outcome {
  double seconds = 0;
  int64_t bytes = 0;
};

// When each node committed, in ms from the first (its graph.node.completed
// event's time: millisecond resolution).
std::vector<double> NodeTimes(Api& api) {
  Result<Json> events = api.Call(
      "ledger.events", {{"run", "chain"}, {"kind", "graph.node.completed"}, {"limit", 100000}},
      Actor{"bench", "human"});
  if (!events.ok()) Die(events.status().ToString());
  std::vector<double> out;
  for (const Json& e : (*events)["events"]) {
    out.push_back(static_cast<double>(ParseTime(e["time"].get<std::string>())));
  }
  const double first = out.empty() ? 0 : out.front();
  for (double& t : out) t -= first;
  return out;
}

Outcome RunBaton(const Args& args, const std::string& definition, int round,
                 Durability durability = Durability::kFull, const Json& context = Json(),
                 std::vector<double>* node_ms = nullptr) {
  const std::string db = args.dir + "/baton-graph-bench-" + std::to_string(round) + ".db";
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) fs::remove(db + suffix);
  Outcome out;
  {
    ApiOptions options;
    options.store.location = db;
    options.store.durability = durability;
    options.validate_output = false;
    auto api = Api::Open(options);
    if (!api.ok()) Die(api.status().ToString());
    if (Status s = (*api)->EnsureStore(); !s.ok()) Die(s.ToString());
    // The user at the terminal, as the CLI runs it: graph.run's nodes run
    // commands, which takes the grants.
    const Actor actor{"bench", "coordinator", AllGrants()};
    const auto start = Clock::now();
    Json in = {{"text", definition}, {"id", "chain"}};
    if (!context.is_null()) in["context"] = context;
    Result<Json> r = (*api)->Call("graph.run", in, actor);
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!r.ok()) Die(r.status().ToString());
    if ((*r)["status"] != "completed") Die("the chain did not complete: " + r->dump());
    if (node_ms != nullptr) *node_ms = NodeTimes(**api);
  }
  out.bytes = BytesOnDisk(db);
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) fs::remove(db + suffix);
  return out;
}

Json RunLangGraph(const Args& args, const std::string& mode) {
  const std::string db = args.dir + "/langgraph-bench.db";
  const std::string command = "node '" + args.langgraph + "' --mode " + mode + " --nodes " +
                              std::to_string(args.nodes) + " --db '" + db + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) Die("cannot run node");
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
  if (pclose(pipe) != 0) {
    Die("LangGraph run failed (did you run `(cd bench/langgraph && npm ci)`?): " + command);
  }
  Json out = Json::parse(text, nullptr, false);
  if (out.is_discarded()) Die("LangGraph printed no JSON: " + text);
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) fs::remove(db + suffix);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--nodes") {
      args.nodes = std::stoi(value());
    } else if (a == "--rounds") {
      args.rounds = std::stoi(value());
    } else if (a == "--dir") {
      args.dir = value();
    } else if (a == "--langgraph") {
      args.langgraph = value();
    } else {
      Die("unknown flag " + a);
    }
  }
  if (!fs::exists(fs::path(args.langgraph).parent_path() / "node_modules")) {
    Die("LangGraph.js is not installed: run `(cd bench/langgraph && npm ci)`");
  }
  const std::string noop = Chain(args.nodes, Work::kNoop);
  std::vector<double> ours, ours_normal, theirs;
  for (int round = 0; round < args.rounds; ++round) {
    ours.push_back(args.nodes / RunBaton(args, noop, round).seconds);
    theirs.push_back(RunLangGraph(args, "noop")["nodes_per_second"].get<double>());
    ours_normal.push_back(args.nodes / RunBaton(args, noop, round, Durability::kNormal).seconds);
    std::fprintf(stderr, "round %d: baton %.0f nodes/s (normal: %.0f), LangGraph.js %.0f nodes/s\n",
                 round + 1, ours.back(), ours_normal.back(), theirs.back());
  }
  std::vector<double> history_ms;
  const Outcome history = RunBaton(args, Chain(args.nodes, Work::kHistory), args.rounds,
                                   Durability::kFull, Json(), &history_ms);
  const Json lg = RunLangGraph(args, "history");
  // A 200-node chain carrying a 100 KB state that each node leaves alone
  // but for a counter.
  Args big_args = args;
  big_args.nodes = 200;
  std::vector<double> big_ms;
  const Outcome big = RunBaton(big_args, Chain(200, Work::kBigState), args.rounds,
                               Durability::kFull, Json{{"blob", std::string(100 * 1024, 'y')}},
                               &big_ms);
  const Json lg_big = RunLangGraph(big_args, "bigstate");
  const double ours_median = Median(ours);
  const double theirs_median = Median(theirs);
  const int64_t lg_bytes = lg["db_bytes"].get<int64_t>();

  std::printf("| %d-node chain | baton | LangGraph.js | ratio |\n|---|---|---|---|\n", args.nodes);
  std::printf("| checkpointed no-op nodes/s (median of %d) | %.0f | %.0f | %.1fx |\n", args.rounds,
              ours_median, theirs_median, ours_median / theirs_median);
  std::printf("| the same, baton at durability normal (LangGraph's setting) | %.0f | %.0f | %.1fx |\n",
              Median(ours_normal), theirs_median, Median(ours_normal) / theirs_median);
  std::printf("| store after %d nodes, +1 message each | %.1f MB | %.1f MB | %.1fx smaller |\n",
              args.nodes, history.bytes / 1e6, lg_bytes / 1e6,
              static_cast<double>(lg_bytes) / static_cast<double>(history.bytes));
  // Does a node cost more late in the run than early? The first 100
  // nodes' time against the last 100's, each side by its own clock.
  auto windows = [](const std::vector<double>& t) {
    if (t.size() < 200) Die("too few node times for two windows of 100");
    return std::pair<double, double>{t[100] - t[0], t.back() - t[t.size() - 101]};
  };
  auto lg_times = [](const Json& out) { return out["node_ms"].get<std::vector<double>>(); };
  std::printf("\n| chain | baton first 100 nodes (ms) | last 100 | last ÷ first | LangGraph.js "
              "first 100 | last 100 | last ÷ first | baton faster, whole run |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const struct {
    const char* what;
    std::vector<double> ours;
    std::vector<double> theirs;
    double ours_s, theirs_s;
  } growth[] = {
      {"%d nodes, +1 message each", history_ms, lg_times(lg), history.seconds,
       lg["seconds"].get<double>()},
      {"200 nodes, a 100 KB state", big_ms, lg_times(lg_big), big.seconds,
       lg_big["seconds"].get<double>()},
  };
  for (const auto& g : growth) {
    const auto [of, ol] = windows(g.ours);
    const auto [tf, tl] = windows(g.theirs);
    std::printf("| ");
    std::printf(g.what, args.nodes);
    std::printf(" | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.1fx |\n", of, ol, ol / of, tf, tl,
                tl / tf, g.theirs_s / g.ours_s);
  }
  std::printf("\nLangGraph.js: journal_mode=%s synchronous=%s; baton: durability full (WAL, "
              "synchronous=FULL)\n",
              lg.value("journal_mode", Json("?")).dump().c_str(),
              lg.value("synchronous", Json("?")).dump().c_str());
  return 0;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) { return baton::Main(argc, argv); }
