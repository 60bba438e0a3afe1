#include "cli/completion.h"

#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>

namespace baton {
namespace {

// One place in the command tree: the words that lead there ("run create")
// and what may follow them (its commands, then its flags and the global ones).
struct Node {
  std::string path;
  std::vector<std::string> words;
};

void Walk(const CLI::App& app, const std::string& path, const std::vector<std::string>& globals,
          std::vector<Node>& out) {
  Node node{path, {}};
  for (const CLI::App* sub : app.get_subcommands({})) node.words.push_back(sub->get_name());
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) node.words.push_back("--" + name);
  }
  if (!path.empty()) node.words.insert(node.words.end(), globals.begin(), globals.end());
  out.push_back(node);
  for (const CLI::App* sub : app.get_subcommands({})) {
    Walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), globals, out);
  }
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Bash (zsh runs it through bashcompinit): the path is the command words
// typed so far that name commands; the candidates are what may follow it.
std::string Bash(const std::vector<Node>& nodes) {
  std::ostringstream s;
  s << "# baton completion for bash (baton completion bash)\n"
       "_baton() {\n"
       "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" w i\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    w=\"${COMP_WORDS[i]}\"\n"
       "    case \"$w\" in -*) continue ;; esac\n"
       "    case \"${path:+$path }$w\" in\n";
  std::string paths;
  for (const Node& n : nodes) {
    if (!n.path.empty()) paths += (paths.empty() ? "      \"" : "|\"") + n.path + "\"";
  }
  s << paths << ") path=\"${path:+$path }$w\" ;;\n"
       "    esac\n"
       "  done\n"
       "  local words\n"
       "  case \"$path\" in\n";
  for (const Node& n : nodes) s << "    \"" << n.path << "\") words=\"" << Join(n.words) << "\" ;;\n";
  s << "  esac\n"
       "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "}\n"
       "complete -F _baton baton\n";
  return s.str();
}

std::string Fish(const std::vector<Node>& nodes) {
  std::ostringstream s;
  s << "# baton completion for fish (baton completion fish)\n"
       "function __baton_words\n"
       "  set -l path ''\n"
       "  for w in (commandline -opc)[2..-1]\n"
       "    string match -q -- '-*' $w; and continue\n"
       "    set -l next (string trim -- \"$path $w\")\n"
       "    switch $next\n";
  std::string paths;
  for (const Node& n : nodes) {
    if (!n.path.empty()) paths += " '" + n.path + "'";
  }
  s << "      case" << paths << "\n"
       "        set path $next\n"
       "    end\n"
       "  end\n"
       "  switch $path\n";
  for (const Node& n : nodes) {
    s << "    case '" << n.path << "'\n      string split ' ' -- '" << Join(n.words) << "'\n";
  }
  s << "  end\n"
       "end\n"
       "complete -c baton -f -a '(__baton_words)'\n";
  return s.str();
}

}  // namespace

Result<std::string> CompletionScript(const CLI::App& app, const std::string& shell) {
  std::vector<std::string> globals;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) globals.push_back("--" + name);
  }
  std::vector<Node> nodes;
  Walk(app, "", globals, nodes);
  if (shell == "bash") return Bash(nodes);
  if (shell == "zsh") {
    return "#compdef baton\n# baton completion for zsh (baton completion zsh)\n"
           "autoload -U +X bashcompinit && bashcompinit\n" +
           Bash(nodes);
  }
  if (shell == "fish") return Fish(nodes);
  return InvalidArgumentError("shell: \"" + shell + "\" is not one of bash, zsh, fish");
}

}  // namespace baton
