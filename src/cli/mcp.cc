// `baton mcp`: the MCP stdio server an agent host launches.

#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "mcp/stdio.h"

namespace baton {

const char kMcpHelp[] =
    "Serve the Model Context Protocol on stdin/stdout for one agent host.\n"
    "\n"
    "Register baton with an agent host, naming the agent and its role:\n"
    "  claude mcp add baton -- baton mcp --agent coder\n"
    "  claude mcp add baton -- baton mcp --agent coordinator --role coordinator --tools sgai\n"
    "  codex mcp add baton -- baton mcp --agent reviewer\n"
    "or in a host's JSON configuration:\n"
    "  {\"mcpServers\": {\"baton\": {\"command\": \"baton\", \"args\": [\"mcp\", \"--agent\", \"coder\"]}}}\n"
    "Over HTTP, `baton serve` answers at http://127.0.0.1:8321/mcp (Streamable HTTP):\n"
    "  baton token create coder --holder-role agent      # prints the token once\n"
    "  claude mcp add --transport http baton http://127.0.0.1:8321/mcp \\\n"
    "      --header 'Authorization: Bearer baton_...'\n"
    "\n"
    "Grants (--grant, repeatable; default none): commands (run graph command, agent and\n"
    "HTTP nodes), definitions (graph definitions inline or from outside the roots),\n"
    "paths (name paths outside the roots). The same for a token: baton token create\n"
    "coder --holder-role agent --grant commands.\n"
    "\n"
    "Tool sets (--tools, comma-separated, combinable): baton (the default: the tools of\n"
    "the caller's work - an agent's 24: task_claim, task_complete, mail_send,\n"
    "question_ask, ...; a coordinator's 45, planning runs and tasks too), all (every\n"
    "operation as a tool), sgai (update_workflow_state, send_message, check_inbox,\n"
    "...), genie (genie_task_checkout, genie_task_done, ...). docs/mcp.md has the\n"
    "details.";

int RunMcp(const GlobalOptions& g, const McpCommandOptions& options) {
  Result<ApiOptions> api_options =
      ResolveApiOptions(g, /*group_commit=*/true, StoreUse::kCreateIfNone);
  if (!api_options.ok()) return ReportError(api_options.status(), "text");
  Result<Actor> actor = ResolveActor(g);
  if (!actor.ok()) return ReportError(actor.status(), "text");
  // A host that names neither agent nor role runs an agent, never the
  // human: an agent must not answer its own questions.
  if (g.role.empty() && std::getenv("BATON_ROLE") == nullptr && g.agent.empty() &&
      std::getenv("BATON_AGENT") == nullptr) {
    actor->role = "agent";
  }
  // The agent holds what --grant names, whatever the terminal's user holds.
  actor->grants = options.grants;
  api_options->mirror_delay_ms = kDefaultMirrorDelayMs;
  Result<std::unique_ptr<Api>> api = Api::Open(*api_options);
  if (!api.ok()) return ReportError(api.status(), "text");
  Status opened = (*api)->EnsureStore();
  if (!opened.ok()) return ReportError(opened, "text");
  mcp::McpOptions mcp_options;
  mcp_options.tool_sets = options.tool_sets;
  mcp_options.run = !options.run.empty() ? options.run
                    : std::getenv("BATON_RUN") != nullptr ? std::getenv("BATON_RUN") : "";
  mcp_options.progress_interval_ms = options.progress_interval_ms;
  Result<std::unique_ptr<mcp::McpServer>> server = mcp::McpServer::Create(**api, mcp_options);
  if (!server.ok()) return ReportError(server.status(), "text");
  std::string grants;
  for (const std::string& grant : actor->grants) grants += (grants.empty() ? "" : ",") + grant;
  std::cerr << "baton mcp: serving " << actor->id << " (" << actor->role
            << ", grants: " << (grants.empty() ? "none" : grants) << ") on stdio, store "
            << RedactedLocation(api_options->store.location) << "\n";
  mcp::ServeStdio(**server, *actor, 0, 1);
  server->reset();
  (*api)->Shutdown();
  return 0;
}

}  // namespace baton
