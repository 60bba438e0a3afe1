// `baton url`: the human's link to `baton serve`, and the link's shape.

#include <iostream>

#include "cli/cli.h"
#include "engine/core/tokens.h"
#include "util/store_location.h"

namespace baton {
namespace {

std::string LinkTo(const std::string& address, const std::string& secret) {
  return "http://" + address + "/" + (secret.empty() ? "" : "#token=" + secret);
}

}  // namespace

std::string DashboardLink(const std::string& host, int port, const std::string& secret) {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return LinkTo(h + ":" + std::to_string(port), secret);
}

int RunUrl(const GlobalOptions& g, const std::string& listen) {
  if (listen.empty() || listen.find_first_of(" /#?@") != std::string::npos) {
    return ReportError(
        InvalidArgumentError("--listen: expected host:port (got \"" + listen + "\")"), g.output);
  }
  Result<ApiOptions> options = ResolveApiOptions(g, /*group_commit=*/false);
  if (!options.ok()) return ReportError(options.status(), g.output);
  // The secret lives beside the store.
  Result<std::unique_ptr<Api>> api = Api::Open(*options);
  if (!api.ok()) return ReportError(api.status(), g.output);
  Status opened = (*api)->EnsureStore();
  if (!opened.ok()) return ReportError(opened, g.output);
  const std::string path = HumanSecretPath(options->store.location);
  if (path.empty()) {
    return ReportError(FailedPreconditionError("--store " + RedactedLocation(options->store.location) +
                                               ": a store without a file has no lasting secret; "
                                               "baton serve prints its link at start"),
                       g.output);
  }
  Result<std::string> secret = LoadOrCreateHumanSecret(path);
  if (!secret.ok()) return ReportError(secret.status(), g.output);
  const std::string link = LinkTo(listen, *secret);
  if (g.output == "json") {
    std::cout << Json{{"url", link}, {"secret_file", path}}.dump(2) << "\n";
  } else {
    std::cout << link << "\n";
  }
  return 0;
}

}  // namespace baton
