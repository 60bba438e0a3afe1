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

std::string HumanSecretFile(const std::string& store_location, const std::string& flag) {
  return flag.empty() ? HumanSecretPath(store_location) : flag;
}

int RunUrl(const GlobalOptions& g, const std::string& listen, const std::string& secret_file) {
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
  const std::string path = HumanSecretFile(options->store.location, secret_file);
  if (path.empty()) {
    return ReportError(FailedPreconditionError("--store " + RedactedLocation(options->store.location) +
                                               ": a store without a file keeps no secret beside "
                                               "it; name one with --secret-file (the same as baton "
                                               "serve's), or use the link baton serve prints"),
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
