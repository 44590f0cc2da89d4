#include "controller/conversation_settings.h"

#include <QJsonValue>
#include <QObject>
#include <cmath>
#include <limits>

#include "ember/error.h"

namespace ember::app {

namespace {
// 0.8f is 0.800000011920929 as a double; people typed 0.8, so show and store 0.8.
double tidy(float v) { return QString::number(double(v), 'g', 6).toDouble(); }
}  // namespace

QJsonObject builtInSettings() {
  const SamplingParams d;  // the engine's defaults
  return {{"systemPrompt", QString()},
          {"temperature", tidy(d.temperature)},
          {"topP", tidy(d.topP)},
          {"topK", d.topK},
          {"minP", tidy(d.minP)},
          {"repeatPenalty", tidy(d.repeatPenalty)},
          {"maxTokens", double(d.maxTokens)},
          {"seed", QStringLiteral("random")},
          {"contextLength", 0},
          {"threads", 0},
          {"maxSequences", kDefaultMaxSequences},
          {"backend", QStringLiteral("auto")}};
}

SamplingParams samplingFrom(const QJsonObject& s) {
  SamplingParams p;
  p.temperature = float(s.value("temperature").toDouble(p.temperature));
  p.topP = float(s.value("topP").toDouble(p.topP));
  p.topK = s.value("topK").toInt(p.topK);
  p.minP = float(s.value("minP").toDouble(p.minP));
  p.repeatPenalty = float(s.value("repeatPenalty").toDouble(p.repeatPenalty));
  p.maxTokens = static_cast<int64_t>(s.value("maxTokens").toDouble(double(p.maxTokens)));
  p.seed = parseSeed(s.value("seed").toString(QStringLiteral("random")).toStdString());
  return p;
}

QJsonObject samplingJson(const SamplingParams& p) {
  return {{"temperature", tidy(p.temperature)}, {"top_p", tidy(p.topP)},
          {"top_k", p.topK},                      {"min_p", tidy(p.minP)},
          {"repeat_penalty", tidy(p.repeatPenalty)},
          {"max_tokens", double(p.maxTokens)},
          {"seed", p.seed ? QString::number(*p.seed) : QStringLiteral("random")}};
}

namespace {

// The typed text as a number, or an error message.
QString toNumber(const QVariant& value, bool integer, double* out) {
  const QString text = value.toString().trimmed();
  bool ok = false;
  if (integer) {
    const qlonglong v = text.toLongLong(&ok);
    *out = double(v);
  } else {
    *out = text.toDouble(&ok);
    if (text.compare(QLatin1String("nan"), Qt::CaseInsensitive) == 0) ok = false;
  }
  if (!ok || !std::isfinite(*out))
    return integer ? QObject::tr("Enter a whole number.") : QObject::tr("Enter a number.");
  return {};
}

}  // namespace

QString settingError(const QJsonObject& current, const QString& key, const QVariant& value,
                     const ModelLimits& limits, QJsonValue* normalized) {
  QJsonValue stored;
  if (key == QLatin1String("systemPrompt")) {
    stored = value.toString();
  } else if (key == QLatin1String("backend")) {
    const QString device = value.toString().trimmed().toLower();
    static const QStringList devices = {"auto", "cpu", "cuda"};
    if (!devices.contains(device))
      return QObject::tr("The compute device must be auto, cpu or cuda.");
    stored = device;
  } else if (key == QLatin1String("seed")) {
    const QString text = value.toString().trimmed();
    try {
      parseSeed(text.toStdString());
    } catch (const Error& e) {
      return QString::fromUtf8(e.what());
    }
    stored = text.isEmpty() || text == QLatin1String("-1") ? QStringLiteral("random") : text;
  } else {
    static const QStringList integers = {"topK", "maxTokens", "contextLength", "threads",
                                         "maxSequences"};
    static const QStringList floats = {"temperature", "topP", "minP", "repeatPenalty"};
    const bool integer = integers.contains(key);
    if (!integer && !floats.contains(key)) return QObject::tr("Unknown setting %1.").arg(key);
    double number = 0;
    if (QString e = toNumber(value, integer, &number); !e.isEmpty()) return e;
    stored = number;
    if (key == QLatin1String("threads")) {
      if (number < 0 || number > 1024) return QObject::tr("Threads must be 0 (automatic) to 1024.");
    } else if (key == QLatin1String("maxSequences")) {
      if (number < 1 || number > kMaxSequencesLimit)
        return QObject::tr("Answers at once must be 1 to %1.").arg(kMaxSequencesLimit);
    } else if (key == QLatin1String("contextLength")) {
      if (number != 0) {
        try {
          validateContextLength(qint64(number), limits.trainedContext > 0
                                                    ? limits.trainedContext
                                                    : std::numeric_limits<int32_t>::max());
        } catch (const Error& e) {
          return QString::fromUtf8(e.what());
        }
      }
    } else {
      // The engine's own checks, on the settings as they would be with this value.
      QJsonObject next = current;
      next.insert(key, stored);
      try {
        const SamplingParams params = samplingFrom(next);
        const size_t vocab = limits.vocabSize > 0 ? size_t(limits.vocabSize) : size_t(1) << 31;
        const int32_t ctx = limits.contextLength > 0 ? int32_t(limits.contextLength)
                                                     : std::numeric_limits<int32_t>::max();
        validate(params, vocab, ctx);
      } catch (const Error& e) {
        return QString::fromUtf8(e.what());
      }
    }
  }
  if (normalized) *normalized = stored;
  return {};
}

}  // namespace ember::app
