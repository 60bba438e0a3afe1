// File: resources.h
//
// What an MCP client can read as resources, each backed by a read operation
// called as the client:
//   baton://runs                   the runs (run.list)
//   baton://runs/{id}              one run (run.show)
//   baton://runs/{id}/tasks        its tasks (task.list)
//   baton://runs/{id}/ledger       its ledger events (ledger.events)
//   baton://runs/{id}/questions    its questions, open or not (question.list)
//   baton://tasks/{id}             one task (task.show)
//   baton://questions              the questions waiting for a human
// Contents are JSON text. Subscriptions are kept by the session; the URIs a
// ledger event changes come from UrisChangedBy.

#ifndef BATON_SRC_MCP_RESOURCES_H_
#define BATON_SRC_MCP_RESOURCES_H_

#include <string>
#include <vector>

#include "ops/api.h"

namespace baton::mcp {

// {resourceTemplates: [...]}.
Json ResourceTemplates();
// {resources: [...]}: the fixed resources and one per run not yet finished.
Result<Json> ListResources(Api& api, const Actor& actor);
// {contents: [{uri, mimeType, text}]}. NotFound for a URI that names
// nothing (an unknown shape, run or task).
Result<Json> ReadResource(Api& api, const Actor& actor, const std::string& uri);
// InvalidArgument unless "uri" has one of the shapes above.
Status CheckResourceUri(const std::string& uri);

// The resource URIs whose contents ledger event "event" changed.
std::vector<std::string> UrisChangedBy(const Json& event);

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_RESOURCES_H_
