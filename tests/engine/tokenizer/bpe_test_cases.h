#pragma once
// Shared by the BPE tests: llama.cpp's tokenizer test vectors (../shared/testdata/tokenizer/,
// format in its README) and a per-process cache of the tokenizers built from their vocabularies.
#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace ember::test {

struct VocabCase {
  std::string text;
  std::vector<TokenId> ids;
};

// llama.cpp's own models/ folder (vocabularies, test vectors, templates), fetched by
// scripts/fetch-llamacpp-vocab.sh into $EMBER_LLAMACPP_DATA (default
// ~/.cache/ember/llama.cpp-0.3.36).
inline QString llamaCppDataDir() {
  const QByteArray env = qgetenv("EMBER_LLAMACPP_DATA");
  if (!env.isEmpty()) return QString::fromLocal8Bit(env);
  return QDir::homePath() + QStringLiteral("/.cache/ember/llama.cpp-0.3.36");
}

// The path of models/ggml-vocab-NAME.gguf there, or empty with `why` filled in.
inline QString findLlamaCppVocab(const QString& name, QString* why) {
  const QString path =
      llamaCppDataDir() + QStringLiteral("/models/ggml-vocab-%1.gguf").arg(name);
  if (QFile::exists(path)) return path;
  if (why) {
    *why = QStringLiteral("%1 is missing: run scripts/fetch-llamacpp-vocab.sh or set "
                          "EMBER_LLAMACPP_DATA").arg(path);
  }
  return {};
}

inline QString vocabFile(const QString& vocab) {
  return QStringLiteral("tokenizer/ggml-vocab-%1.gguf").arg(vocab);
}

// Texts are separated by "\n__ggml_vocab_test__\n" (the file also ends with one); the .out file
// has one line of ids per text. Returns an empty list when the files are missing.
inline std::vector<VocabCase> readVocabCases(const QString& ggufPath) {
  QFile inp(ggufPath + QStringLiteral(".inp")), out(ggufPath + QStringLiteral(".out"));
  if (!inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly)) return {};
  const std::string all = inp.readAll().toStdString();
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t start = 0;
  for (size_t hit = all.find(separator); hit != std::string::npos;
       hit = all.find(separator, start)) {
    texts.push_back(all.substr(start, hit - start));
    start = hit + separator.size();
  }
  if (start < all.size()) texts.push_back(all.substr(start));
  const QList<QByteArray> lines = out.readAll().split('\n');
  std::vector<VocabCase> cases;
  for (size_t i = 0; i < texts.size() && i < static_cast<size_t>(lines.size()); ++i) {
    VocabCase c{texts[i], {}};
    for (const QByteArray& id : lines[static_cast<qsizetype>(i)].split(' ')) {
      if (!id.trimmed().isEmpty()) c.ids.push_back(id.trimmed().toInt());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Tokenizers are built once per test process (the large vocabularies take a moment).
inline const Tokenizer& cachedTokenizer(const QString& path) {
  static std::map<QString, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[path];
  if (!slot) slot = Tokenizer::fromGguf(*gguf::GgufFile::open(path.toStdString()));
  return *slot;
}

inline QString idsToString(const std::vector<TokenId>& ids) {
  QStringList parts;
  for (TokenId id : ids) parts << QString::number(id);
  return parts.join(QLatin1Char(' '));
}

}  // namespace ember::test
