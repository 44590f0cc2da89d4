#include "cli_args.h"

#include <fstream>
#include <sstream>

#include "ember/error.h"

namespace ember::cli {

ParsedArgs::ParsedArgs(const Args& args, const std::set<std::string>& valueOptions,
                       const std::set<std::string>& flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      if (valueOptions.count(a)) {
        if (i + 1 >= args.size()) throw Error("option " + a + " needs a value");
        values_.emplace_back(a, args[++i]);
      } else if (flags.count(a)) {
        flags_.insert(a);
      } else {
        throw Error("unknown option " + a);
      }
    } else {
      positional_.push_back(a);
    }
  }
}

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  for (auto it = values_.rbegin(); it != values_.rend(); ++it)
    if (it->first == name) return it->second;
  return std::nullopt;
}

std::vector<std::string> ParsedArgs::values(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [option, v] : values_)
    if (option == name) out.push_back(v);
  return out;
}

std::string ParsedArgs::required(const std::string& name) const {
  auto v = value(name);
  if (!v) throw Error("missing required option " + name);
  return *v;
}

bool ParsedArgs::flag(const std::string& name) const { return flags_.count(name) > 0; }

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("error while reading '" + path + "'");
  return ss.str();
}

}  // namespace ember::cli
