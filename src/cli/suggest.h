// File: suggest.h
//
// "Did you mean" for a command line CLI11 refused: the first word that
// names no command or verb, or the first flag the chosen verb does not
// take, with the nearest ones that exist (as git and cargo do).

#ifndef BATON_SRC_CLI_SUGGEST_H_
#define BATON_SRC_CLI_SUGGEST_H_

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace baton {

// Edit distance (insertions, deletions, substitutions) between "a" and "b".
size_t EditDistance(const std::string& a, const std::string& b);

// The names among "candidates" nearest to "word" (all at the same, small
// distance; at most 3).
std::vector<std::string> Nearest(const std::string& word,
                                 const std::vector<std::string>& candidates);

// What to tell the user about "args" (argv without the program), or "" when
// nothing in it is unknown: e.g. "baton: no command \"rn\" in baton; did you
// mean run?".
std::string Suggestion(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace baton

#endif  // BATON_SRC_CLI_SUGGEST_H_
