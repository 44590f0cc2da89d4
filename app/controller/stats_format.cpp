#include "controller/stats_format.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QObject>
#include <QVariantList>
#include <vector>

namespace ember::app {

store::MessageStats toMessageStats(const RequestStats& s, const QList<double>& tokenTimesMs,
                                   const QJsonObject& sampling, const QString& model,
                                   const QString& backend) {
  store::MessageStats m;
  m.queueWaitMs = s.queueWaitMs;
  m.tokenizeMs = s.tokenizeMs;
  m.prefillMs = s.prefillMs;
  m.prefillTokensPerSecond = s.prefillTokensPerSecond;
  m.ttftMs = s.ttftMs;
  m.itlP50Ms = percentile(s.interTokenMs, 50);
  m.itlP95Ms = percentile(s.interTokenMs, 95);
  m.itlMaxMs = percentile(s.interTokenMs, 100);
  m.decodeTokensPerSecond = s.decodeTokensPerSecond;
  m.totalMs = s.totalMs;
  m.promptTokens = s.promptTokens;
  m.cachedTokens = s.cachedPromptTokens;
  m.generatedTokens = s.generatedTokens;
  m.finishReason = QString::fromUtf8(finishReasonName(s.finishReason).data(),
                                     qsizetype(finishReasonName(s.finishReason).size()));
  m.sampling = sampling;
  m.sampling.insert(QStringLiteral("seed"), QString::number(s.seed));
  if (s.droppedTurns > 0) m.sampling.insert(QStringLiteral("dropped_turns"), s.droppedTurns);
  if (!s.templateWarning.empty())
    m.sampling.insert(QStringLiteral("template_warning"), QString::fromStdString(s.templateWarning));
  m.seed = s.seed;
  m.model = model;
  m.backend = backend;
  m.tokenTimesMs = tokenTimesMs;
  return m;
}

QString promptReuseText(const store::MessageStats& s) {
  return QObject::tr("reused %1 of %2 prompt tokens").arg(s.cachedTokens).arg(s.promptTokens);
}

QString compactStatsLine(const store::MessageStats& s) {
  QString line = QObject::tr("TTFT %1 ms · %2 tok/s · %3 tokens")
                     .arg(qRound(s.ttftMs))
                     .arg(s.decodeTokensPerSecond, 0, 'f', 1)
                     .arg(s.generatedTokens);
  // A prompt that never reached the engine (an error before tokenizing) has nothing to reuse.
  if (s.promptTokens > 0) line += QStringLiteral(" · ") + promptReuseText(s);
  if (!s.backend.isEmpty()) line += QStringLiteral(" · ") + s.backend;
  return line;
}

QVariantMap statsDetails(const store::MessageStats& s) {
  auto ms = [](double v) { return QStringLiteral("%1 ms").arg(v, 0, 'f', 1); };
  auto rate = [](double v) { return QStringLiteral("%1 tok/s").arg(v, 0, 'f', 1); };
  const QVariantList rows = {
      QVariantList{QObject::tr("Queue wait"), ms(s.queueWaitMs)},
      QVariantList{QObject::tr("Tokenize"), ms(s.tokenizeMs)},
      QVariantList{QObject::tr("Prefill"), ms(s.prefillMs)},
      QVariantList{QObject::tr("Prefill speed"), rate(s.prefillTokensPerSecond)},
      QVariantList{QObject::tr("Time to first token"), ms(s.ttftMs)},
      QVariantList{QObject::tr("Inter-token p50 / p95 / max"),
                   QStringLiteral("%1 / %2 / %3 ms")
                       .arg(s.itlP50Ms, 0, 'f', 1).arg(s.itlP95Ms, 0, 'f', 1)
                       .arg(s.itlMaxMs, 0, 'f', 1)},
      QVariantList{QObject::tr("Decode speed"), rate(s.decodeTokensPerSecond)},
      QVariantList{QObject::tr("Total"), ms(s.totalMs)},
      QVariantList{QObject::tr("Prompt / cached / generated tokens"),
                   QStringLiteral("%1 / %2 / %3")
                       .arg(s.promptTokens).arg(s.cachedTokens).arg(s.generatedTokens)},
      QVariantList{QObject::tr("Prompt reuse (prefix cache)"), promptReuseText(s)},
      QVariantList{QObject::tr("Finish reason"), s.finishReason},
      QVariantList{QObject::tr("Seed"), QString::number(s.seed)},
      QVariantList{QObject::tr("Sampling"),
                   QString::fromUtf8(QJsonDocument(s.sampling).toJson(QJsonDocument::Compact))},
      QVariantList{QObject::tr("Model"), QFileInfo(s.model).fileName()},
      QVariantList{QObject::tr("Backend"), s.backend},
  };
  QVariantList times;
  for (double t : s.tokenTimesMs) times << t;
  return {{QStringLiteral("rows"), rows}, {QStringLiteral("tokenTimes"), times},
          {QStringLiteral("summary"), compactStatsLine(s)}};
}

}  // namespace ember::app
