// ChatStore: full-text search over message text (the two indexes are described in schema.cpp).
#include "store/chat_store.h"
#include "store/fts_query.h"

namespace ember::store {
namespace {

// Table names cannot be bound, so each index has its own constant statement. snippet() counts
// tokens: 16 words, or 64 trigrams (about as many characters).
constexpr const char* kSearchWords =
    "SELECT m.conversation_id, m.id, c.title, "
    "       snippet(message_words, 0, ?2, ?3, '…', 16) "
    "FROM message_words JOIN messages m ON m.id = message_words.rowid "
    "JOIN conversations c ON c.id = m.conversation_id "
    "WHERE message_words MATCH ?1 AND c.deleted_at IS NULL ORDER BY rank, m.id DESC LIMIT ?4";
constexpr const char* kSearchGrams =
    "SELECT m.conversation_id, m.id, c.title, "
    "       snippet(message_grams, 0, ?2, ?3, '…', 64) "
    "FROM message_grams JOIN messages m ON m.id = message_grams.rowid "
    "JOIN conversations c ON c.id = m.conversation_id "
    "WHERE message_grams MATCH ?1 AND c.deleted_at IS NULL ORDER BY rank, m.id DESC LIMIT ?4";

}  // namespace

QList<SearchHit> ChatStore::search(const QString& query, int limit, const QString& matchStart,
                                   const QString& matchEnd) const {
  sql::ActionScope scope(db(), "searching the conversations");
  const std::optional<FtsQuery> fts = buildFtsQuery(query);
  QList<SearchHit> hits;
  if (!fts || limit <= 0) return hits;

  // Substring matches when every term is long enough; otherwise, or when they find nothing,
  // word-start matches (which also fold accents: cafe -> Café). Not both: the word index would
  // read "c++" as the prefix "c" and bury the exact hits under noise.
  auto collect = [&](const char* sqlText, const QString& match) {
    sql::Statement statement(db_, sqlText);
    statement.bindAll(match, matchStart, matchEnd, limit);
    while (hits.size() < limit && statement.step()) {
      SearchHit hit;
      hit.conversationId = statement.int64(0);
      hit.messageId = statement.int64(1);
      hit.conversationTitle = statement.text(2);
      hit.snippet = statement.text(3);
      hits.push_back(hit);
    }
  };
  if (fts->trigrams) collect(kSearchGrams, *fts->trigrams);
  if (hits.isEmpty()) collect(kSearchWords, fts->words);
  return hits;
}

}  // namespace ember::store
