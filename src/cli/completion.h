// File: completion.h
//
// `baton completion bash|zsh|fish`: a shell completion script made from the
// command tree, which comes from the registry (every group, verb and flag),
// so it never falls behind the operations.

#ifndef BATON_SRC_CLI_COMPLETION_H_
#define BATON_SRC_CLI_COMPLETION_H_

#include <string>

#include "baton/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace baton {

// The script for "shell" (bash, zsh or fish); InvalidArgument for another.
Result<std::string> CompletionScript(const CLI::App& app, const std::string& shell);

}  // namespace baton

#endif  // BATON_SRC_CLI_COMPLETION_H_
