#pragma once
// Turns what the user typed into FTS5 MATCH expressions. User text is never FTS5 syntax: every
// term is quoted (so AND, NEAR, `"`, `*`, `:` are plain characters), and the expressions are
// still passed to SQLite as bound parameters.
#include <QString>
#include <optional>

namespace ember::store {

struct FtsQuery {
  // For the unicode61 index: every term as a word prefix ("안녕"* finds 안녕하세요; accents
  // and case ignored). Always present.
  QString words;
  // For the trigram index: every term as a substring anywhere. Present only when every term
  // has 3 or more characters (code points), the shortest a trigram index can match.
  std::optional<QString> trigrams;
};

// nullopt when the text has no letters or digits to search for. Terms are separated by
// whitespace, and all of them must match.
std::optional<FtsQuery> buildFtsQuery(const QString& userText);

}  // namespace ember::store
