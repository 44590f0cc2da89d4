// ChatStore: the measurements stored with each assistant answer.
#include <QJsonArray>
#include <QJsonDocument>

#include "store/chat_store.h"

namespace ember::store {
namespace {

QString timesToJson(const QList<double>& times) {
  QJsonArray array;
  for (double t : times) array.append(t);
  return QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact));
}

QList<double> timesFromJson(const QString& text) {
  QList<double> times;
  const QJsonArray array = QJsonDocument::fromJson(text.toUtf8()).array();
  times.reserve(array.size());
  for (const QJsonValue& value : array) times.push_back(value.toDouble());
  return times;
}

}  // namespace

void ChatStore::saveStats(Id messageId, const MessageStats& s) {
  sql::Statement upsert(
      db_,
      "INSERT OR REPLACE INTO message_stats (message_id, queue_wait_ms, tokenize_ms, prefill_ms, "
      "prefill_tokens_per_second, ttft_ms, itl_p50_ms, itl_p95_ms, itl_max_ms, "
      "decode_tokens_per_second, total_ms, prompt_tokens, cached_tokens, generated_tokens, "
      "finish_reason, sampling, seed, model, backend, token_times_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20)");
  upsert.bindAll(messageId, s.queueWaitMs, s.tokenizeMs, s.prefillMs, s.prefillTokensPerSecond,
                 s.ttftMs, s.itlP50Ms, s.itlP95Ms, s.itlMaxMs, s.decodeTokensPerSecond,
                 s.totalMs, s.promptTokens, s.cachedTokens, s.generatedTokens, s.finishReason,
                 QString::fromUtf8(QJsonDocument(s.sampling).toJson(QJsonDocument::Compact)),
                 static_cast<qint64>(s.seed),  // two's complement keeps all 64 bits
                 s.model, s.backend, timesToJson(s.tokenTimesMs));
  upsert.run();
}

std::optional<MessageStats> ChatStore::stats(Id messageId) const {
  sql::ActionScope scope(db(), "reading the answer's statistics");
  sql::Statement query(
      db_,
      "SELECT queue_wait_ms, tokenize_ms, prefill_ms, prefill_tokens_per_second, ttft_ms, "
      "itl_p50_ms, itl_p95_ms, itl_max_ms, decode_tokens_per_second, total_ms, prompt_tokens, "
      "cached_tokens, generated_tokens, finish_reason, sampling, seed, model, backend, "
      "token_times_ms FROM message_stats WHERE message_id = ?1");
  query.bindAll(messageId);
  if (!query.step()) return std::nullopt;
  MessageStats s;
  int column = 0;
  for (double* field : {&s.queueWaitMs, &s.tokenizeMs, &s.prefillMs, &s.prefillTokensPerSecond,
                        &s.ttftMs, &s.itlP50Ms, &s.itlP95Ms, &s.itlMaxMs,
                        &s.decodeTokensPerSecond, &s.totalMs})
    *field = query.real(column++);
  s.promptTokens = query.int64(column++);
  s.cachedTokens = query.int64(column++);
  s.generatedTokens = query.int64(column++);
  s.finishReason = query.text(column++);
  s.sampling = QJsonDocument::fromJson(query.text(column++).toUtf8()).object();
  s.seed = static_cast<quint64>(query.int64(column++));
  s.model = query.text(column++);
  s.backend = query.text(column++);
  s.tokenTimesMs = timesFromJson(query.text(column++));
  return s;
}

}  // namespace ember::store
