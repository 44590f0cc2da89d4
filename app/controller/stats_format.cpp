#include "controller/stats_format.h"

#include <QJsonArray>
#include <algorithm>

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

QVariantList samplingRows(const QJsonObject& sampling) {
  // The settings the answer was sampled with, one row each, in the order of the settings panel;
  // keys this version does not know are shown as they are.
  static const QList<std::pair<const char*, const char*>> known = {
      {"temperature", QT_TRANSLATE_NOOP("QObject", "Temperature")},
      {"top_p", QT_TRANSLATE_NOOP("QObject", "Top-p")},
      {"top_k", QT_TRANSLATE_NOOP("QObject", "Top-k")},
      {"min_p", QT_TRANSLATE_NOOP("QObject", "Min-p")},
      {"repeat_penalty", QT_TRANSLATE_NOOP("QObject", "Repeat penalty")},
      {"max_tokens", QT_TRANSLATE_NOOP("QObject", "Max tokens")},
      {"dropped_turns", QT_TRANSLATE_NOOP("QObject", "Older messages left out")},
      {"template_warning", QT_TRANSLATE_NOOP("QObject", "Chat template")},
  };
  auto shown = [](const QJsonValue& v) {
    if (v.isString()) return v.toString();
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 10);
    if (v.isBool()) return v.toBool() ? QObject::tr("yes") : QObject::tr("no");
    return QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact))
        .mid(1).chopped(1);
  };
  QVariantList rows;
  for (const auto& [key, label] : known)
    if (sampling.contains(QLatin1String(key)))
      rows << QVariant(QVariantList{QObject::tr(label), shown(sampling.value(QLatin1String(key)))});
  for (auto it = sampling.begin(); it != sampling.end(); ++it) {
    const bool isKnown = std::any_of(known.begin(), known.end(), [&](const auto& k) {
      return it.key() == QLatin1String(k.first);
    });
    if (!isKnown && it.key() != QLatin1String("seed"))
      rows << QVariant(QVariantList{it.key(), shown(*it)});
  }
  return rows;
}

QVariantMap statsDetails(const store::MessageStats& s) {
  auto ms = [](double v) { return QStringLiteral("%1 ms").arg(v, 0, 'f', 1); };
  auto rate = [](double v) { return QStringLiteral("%1 tok/s").arg(v, 0, 'f', 1); };
  QVariantList rows = {
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
      QVariantList{QObject::tr("Model"), QFileInfo(s.model).fileName()},
      QVariantList{QObject::tr("Backend"), s.backend},
  };
  rows += samplingRows(s.sampling);
  QVariantList times;
  for (double t : s.tokenTimesMs) times << t;
  return {{QStringLiteral("rows"), rows}, {QStringLiteral("tokenTimes"), times},
          {QStringLiteral("summary"), compactStatsLine(s)}};
}

}  // namespace ember::app
