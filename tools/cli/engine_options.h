#pragma once
// Options shared by the ember-cli commands that run a model: parsing of numbers and sampling
// settings, and the stats as JSON.
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/engine.h"

namespace ember::cli {

// Value options the model-running commands accept (besides their own).
const std::set<std::string>& modelValueOptions();

EngineOptions engineOptionsFrom(const ParsedArgs& args);
SamplingParams samplingFrom(const ParsedArgs& args);  // throws ember::Error on a malformed number

// Reads --messages F.json: a JSON array of messages, or an object with "messages" (and "tools").
void loadMessages(const std::string& path, GenerationRequest& request);

nlohmann::ordered_json statsJson(const RequestStats& stats);
std::string statsLine(const RequestStats& stats);  // one compact human-readable line

// cmd_remote.cpp: `--server URL` runs the request on a remote OpenAI-compatible server.
const std::set<std::string>& remoteValueOptions();
int runRemoteGenerate(const ParsedArgs& args, GenerationRequest request);

}  // namespace ember::cli
