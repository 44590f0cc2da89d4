// toMarkdown: an export document for reading. Each conversation shows the branch the app shows
// (root to the active leaf), each answer with its stats line; where a message has other
// versions, a note says so (the JSON export holds them all).
#include <cstdio>
#include <map>
#include <vector>

#include "store/export/chat_export.h"

namespace ember::chatexport {
namespace {

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 32 of 80 prompt tokens · cpu"
std::string statsLine(const Json& s) {
  std::string line = "TTFT " + number(s.value("ttftMs", 0.0), 0) + " ms · " +
                     number(s.value("decodeTokensPerSecond", 0.0), 1) + " tok/s · " +
                     std::to_string(s.value("generatedTokens", int64_t(0))) + " tokens";
  const auto prompt = s.value("promptTokens", int64_t(0));
  if (prompt > 0)
    line += " · reused " + std::to_string(s.value("cachedTokens", int64_t(0))) + " of " +
            std::to_string(prompt) + " prompt tokens";
  const std::string backend = s.value("backend", std::string());
  if (!backend.empty()) line += " · " + backend;
  return line;
}

std::string settingsLine(const Json& settings) {
  std::string line;
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    if (it.key() == "systemPrompt") continue;  // shown as its own block
    if (!line.empty()) line += ", ";
    line += it.key() + " " + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return line;
}

void appendConversation(std::string& out, const Json& c) {
  out += "# " + c.value("title", std::string("Chat")) + "\n\n";
  const std::string model = baseName(c.value("modelPath", std::string()));
  const Json settings = c.value("settings", Json::object());
  std::string about = "Exported from Ember";
  if (!model.empty()) about += ". Model: " + model;
  const std::string settingsText = settingsLine(settings);
  if (!settingsText.empty()) about += ". Settings: " + settingsText;
  out += "*" + about + ".*\n\n";
  if (settings.contains("systemPrompt") && settings["systemPrompt"].is_string() &&
      !settings["systemPrompt"].get<std::string>().empty())
    out += "**System prompt**\n\n" + settings["systemPrompt"].get<std::string>() + "\n\n";

  std::map<int64_t, const Json*> byId;
  std::map<int64_t, int> childrenOf;  // parent id (0: root) -> how many
  for (const Json& m : c["messages"]) {
    byId[m["id"].get<int64_t>()] = &m;
    ++childrenOf[m["parentId"].is_null() ? 0 : m["parentId"].get<int64_t>()];
  }
  std::vector<const Json*> branch;
  if (c.contains("activeLeafId") && !c["activeLeafId"].is_null()) {
    for (auto it = byId.find(c["activeLeafId"].get<int64_t>()); it != byId.end();) {
      branch.insert(branch.begin(), it->second);
      const Json& parent = (*it->second)["parentId"];
      it = parent.is_null() ? byId.end() : byId.find(parent.get<int64_t>());
    }
  }
  for (const Json* m : branch) {
    const std::string role = (*m)["role"].get<std::string>();
    const std::string who = role == "user" ? "You" : role == "assistant" ? "Assistant" : "System";
    out += "**" + who + "**";
    const std::string messageModel = baseName((*m).value("model", std::string()));
    if (role == "assistant" && !messageModel.empty()) out += " · " + messageModel;
    out += "\n\n";
    const std::string reasoning = (*m).value("reasoning", std::string());
    if (!reasoning.empty()) {
      // Folded where Markdown viewers support it (GitHub, most editors), plain text elsewhere.
      out += "<details><summary>Thought for " + number((*m).value("reasoningMs", 0.0) / 1000.0, 0) +
             " s</summary>\n\n" + reasoning + "\n\n</details>\n\n";
    }
    out += (*m)["content"].get<std::string>() + "\n\n";
    if ((*m).contains("stats") && (*m)["stats"].is_object())
      out += "> " + statsLine((*m)["stats"]) + "\n\n";
    const int64_t parent = (*m)["parentId"].is_null() ? 0 : (*m)["parentId"].get<int64_t>();
    if (childrenOf[parent] > 1)
      out += "*(" + std::to_string(childrenOf[parent] - 1) +
             " other version(s) of this message in the JSON export)*\n\n";
  }
}

}  // namespace

std::string toMarkdown(const Json& exported) {
  std::string out;
  bool first = true;
  for (const Json& c : exported.at("conversations")) {
    if (!first) out += "\n---\n\n";
    first = false;
    appendConversation(out, c);
  }
  return out;
}

}  // namespace ember::chatexport
