#include "store/fts_query.h"

#include <QRegularExpression>
#include <QStringList>

namespace ember::store {
namespace {

bool hasLetterOrDigit(const QString& term) {
  for (const char32_t c : term.toUcs4())
    if (QChar::isLetterOrNumber(c)) return true;
  return false;
}

// An FTS5 string: double quotes inside are doubled.
QString quoted(const QString& term) {
  QString escaped = term;
  escaped.replace(QLatin1Char('"'), QLatin1String("\"\""));
  return QLatin1Char('"') + escaped + QLatin1Char('"');
}

}  // namespace

std::optional<FtsQuery> buildFtsQuery(const QString& userText) {
  static const QRegularExpression whitespace(QStringLiteral("\\s+"));
  QStringList terms;
  for (const QString& term : userText.split(whitespace, Qt::SkipEmptyParts))
    if (hasLetterOrDigit(term)) terms << term;
  if (terms.isEmpty()) return std::nullopt;

  bool allLong = true;
  for (const QString& term : terms) allLong = allLong && term.toUcs4().size() >= 3;

  FtsQuery query;
  QStringList prefixes, substrings;
  for (const QString& term : terms) {
    prefixes << quoted(term) + QLatin1Char('*');
    substrings << quoted(term);
  }
  query.words = prefixes.join(QLatin1Char(' '));
  if (allLong) query.trigrams = substrings.join(QLatin1Char(' '));
  return query;
}

}  // namespace ember::store
