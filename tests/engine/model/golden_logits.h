#pragma once
// Reads the llama.cpp golden files written by scripts/make-golden.py (tests/data/golden/*.json)
// and tests/engine/model/data/make_swa_golden.py: per prompt its token ids, llama.cpp's top-20
// (id, logit) pairs at every position (from first_position on, when given), and 32 greedy tokens.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <utility>
#include <vector>

namespace ember::test {

struct GoldenPrompt {
  QString name;
  QString kind;              // "chat" or "raw"
  std::vector<int32_t> ids;  // the prompt
  size_t firstPosition = 0;  // top[i] belongs to prompt position firstPosition + i
  std::vector<std::vector<std::pair<int32_t, float>>> top;  // (positions, 20) best first
  std::vector<int32_t> greedy;                              // llama.cpp's greedy continuation
};

struct GoldenFile {
  QString modelFile;
  QString modelSha256;
  QString reference;  // provenance.reference
  std::vector<GoldenPrompt> prompts;
};

// Returns false with `why` set when the file cannot be read or parsed.
inline bool loadGolden(const QString& path, GoldenFile* golden, QString* why) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    *why = "cannot read " + path;
    return false;
  }
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
  if (doc.isNull()) {
    *why = path + ": " + error.errorString();
    return false;
  }
  const QJsonObject root = doc.object();
  golden->modelFile = root["model_file"].toString();
  golden->modelSha256 = root["model_sha256"].toString();
  golden->reference = root["provenance"].toObject()["reference"].toString();
  for (const QJsonValue& pv : root["prompts"].toArray()) {
    const QJsonObject p = pv.toObject();
    GoldenPrompt prompt;
    prompt.name = p["name"].toString();
    prompt.kind = p["kind"].toString();
    for (const QJsonValue& v : p["prompt_ids"].toArray()) prompt.ids.push_back(v.toInt());
    prompt.firstPosition = size_t(p["first_position"].toInt(0));
    for (const QJsonValue& v : p["greedy"].toArray()) prompt.greedy.push_back(v.toInt());
    for (const QJsonValue& row : p["top"].toArray()) {
      std::vector<std::pair<int32_t, float>> pairs;
      for (const QJsonValue& pair : row.toArray())
        pairs.emplace_back(pair.toArray()[0].toInt(), float(pair.toArray()[1].toDouble()));
      prompt.top.push_back(std::move(pairs));
    }
    if (prompt.ids.empty() || prompt.firstPosition + prompt.top.size() != prompt.ids.size() ||
        prompt.greedy.empty()) {
      *why = path + ": prompt " + prompt.name + " is incomplete";
      return false;
    }
    golden->prompts.push_back(std::move(prompt));
  }
  if (golden->prompts.empty()) {
    *why = path + ": no prompts";
    return false;
  }
  return true;
}

}  // namespace ember::test
