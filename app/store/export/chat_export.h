#pragma once
// Conversations out of and back into Ember's chat database, in plain C++ over SQLite (no Qt), so
// that ember-cli reads the same file the app writes, on machines without the GUI toolkit.
//
// JSON ("ember-chat-export", version 1) holds everything: every branch of the message tree, the
// conversation's settings, and every answer's stats with its token timeline. Markdown is for
// reading: the branch shown in the app, each answer with its stats line, other versions noted.
// Import adds conversations as new ones (every id remapped, nothing overwritten).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::chatexport {

using Json = nlohmann::ordered_json;

// A database that cannot be read, or an export file that is not one; the message says which.
class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kFormatName = "ember-chat-export";
inline constexpr int kFormatVersion = 1;

// One conversation (by id) or all of them (those in the trash left out), read-only.
Json exportJson(const std::string& databasePath, std::optional<int64_t> conversationId = {});
// The Markdown of an exportJson() document.
std::string toMarkdown(const Json& exported);

struct ImportResult {
  int conversations = 0;
  int messages = 0;
  std::vector<int64_t> newConversationIds;
};
// Adds the document's conversations to the database in one transaction (all or nothing).
// Throws ExportError for a document that is not an Ember export or is inconsistent (a parent
// that is not in it, an unknown role); the database is then unchanged.
// One writer per database (writer_lock.h): by default the import takes the writer lock for its
// duration and is refused while another process (the app) holds it. The app, which is the
// writer of its own database, passes CallerIsWriter.
enum class WriterRole { TakeLock, CallerIsWriter };
// The ids the new rows take: 0 lets SQLite pick (one past the largest); otherwise conversations
// get conversation, conversation + 1, ... and messages likewise, in the order they are inserted.
// The app passes a block it reserved, since ids it handed out for writes still queued are not in
// the file yet and SQLite would pick them.
struct FirstIds {
  int64_t conversation = 0;
  int64_t message = 0;
};
ImportResult importJson(const std::string& databasePath, const Json& document,
                        WriterRole role = WriterRole::TakeLock, FirstIds first = {});
// How many conversations and messages importJson would insert for this document (0 for a
// document that is not shaped like an export: its import fails before inserting anything).
std::pair<int64_t, int64_t> importCounts(const Json& document);

}  // namespace ember::chatexport
