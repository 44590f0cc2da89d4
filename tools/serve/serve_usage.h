#pragma once
// `ember-serve usage`: the usage meter's table (per day and key), as text or JSON, with a cost
// column when per-1K-token prices are given.
#include <string>

#include "cli/commands.h"

namespace ember::serve {

int printUsage(const cli::Args& args, const std::string& dataDir);

}  // namespace ember::serve
