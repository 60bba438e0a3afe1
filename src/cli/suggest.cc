#include "cli/suggest.h"

#include <algorithm>

#include <CLI/CLI.hpp>

namespace baton {
namespace {

// "baton run create": the words that chose "app".
std::string PathOf(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    path = a->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

// Every long flag "app" and its parents take, as "--name".
std::vector<std::string> FlagsOf(const CLI::App* app) {
  std::vector<std::string> flags;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& name : o->get_lnames()) flags.push_back("--" + name);
    }
  }
  return flags;
}

const CLI::Option* FindFlag(const CLI::App* app, const std::string& flag) {
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    if (const CLI::Option* o = a->get_option_no_throw(flag)) return o;
  }
  return nullptr;
}

std::string DidYouMean(const std::vector<std::string>& near) {
  if (near.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < near.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == near.size() ? " or " : ", ") + near[i];
  }
  return out + "?";
}

}  // namespace

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> Nearest(const std::string& word,
                                 const std::vector<std::string>& candidates) {
  std::vector<std::pair<size_t, std::string>> scored;
  // One edit for short words ("x" is near everything two letters long).
  const size_t limit = word.size() <= 3 ? 1 : std::max<size_t>(2, word.size() / 3);
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    // A prefix of a longer name ("sta" for "status") is near too.
    if (word.size() >= 2 && c.rfind(word, 0) == 0) d = std::min<size_t>(d, 1);
    if (d <= limit && std::none_of(scored.begin(), scored.end(),
                                   [&](const auto& s) { return s.second == c; })) {
      scored.emplace_back(d, c);
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  // Only the nearest: "rn" is one edit from run and two from url.
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 3 && scored[i].first == scored[0].first; ++i) {
    out.push_back(scored[i].second);
  }
  return out;
}

std::string Suggestion(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cur = &app;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return "";
    if (arg.size() > 2 && arg.rfind("--", 0) == 0) {
      const std::string flag = arg.substr(0, arg.find('='));
      const CLI::Option* o = FindFlag(cur, flag);
      if (o == nullptr) {
        return "baton: " + PathOf(cur) + " has no flag " + flag +
               DidYouMean(Nearest(flag, FlagsOf(cur))) + " (" + PathOf(cur) + " --help lists them)";
      }
      if (o->get_type_size() != 0 && arg.find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      const CLI::Option* o = FindFlag(cur, arg.substr(0, 2));
      if (o != nullptr && o->get_type_size() != 0 && arg.size() == 2) ++i;
      continue;
    }
    const std::vector<const CLI::App*> subs = cur->get_subcommands({});
    if (subs.empty()) continue;  // a verb's positional argument
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* sub : subs) {
      if (sub->check_name(arg)) next = sub;
      names.push_back(sub->get_name());
    }
    if (next == nullptr) {
      // "baton version" means the flag.
      const std::vector<std::string> near =
          FindFlag(cur, "--" + arg) != nullptr ? std::vector<std::string>{"--" + arg}
                                               : Nearest(arg, names);
      return "baton: " + PathOf(cur) + " has no command \"" + arg + "\"" + DidYouMean(near) +
             " (" + PathOf(cur) + " --help lists them)";
    }
    cur = next;
  }
  return "";
}

}  // namespace baton
