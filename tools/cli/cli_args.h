#pragma once
// A small option parser shared by the ember-cli subcommands: `--name value` options, `--flag`
// switches and positional arguments. Unknown options are errors.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.h"

namespace ember::cli {

class ParsedArgs {
 public:
  // valueOptions take a value (`--model M`); flags take none (`--json`). Throws ember::Error on
  // an unknown option or a missing value.
  ParsedArgs(const Args& args, const std::set<std::string>& valueOptions,
             const std::set<std::string>& flags);

  std::optional<std::string> value(const std::string& name) const;  // the last one given
  std::vector<std::string> values(const std::string& name) const;   // all, in order
  std::string required(const std::string& name) const;  // throws when absent
  bool flag(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

// Reads a whole file; throws ember::Error naming the file when it cannot be read.
std::string readFile(const std::string& path);

}  // namespace ember::cli
