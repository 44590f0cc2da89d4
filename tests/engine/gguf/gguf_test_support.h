#pragma once
// Helpers shared by the GGUF tests.
#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace ember::test {

inline std::vector<uint8_t> toBytes(const QByteArray& bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.constData());
  return {data, data + bytes.size()};
}

inline QByteArray toQByteArray(const std::vector<uint8_t>& bytes) {
  return QByteArray(reinterpret_cast<const char*>(bytes.data()), qsizetype(bytes.size()));
}

inline std::vector<uint8_t> sequentialBytes(size_t count, uint8_t start = 0) {
  std::vector<uint8_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<uint8_t>(start + i);
  return out;
}

// A malformed image must be rejected with a GgufError whose message reads
// "<file>: at byte <offset>: ..." and contains `phrase`, both when parsed from memory and when
// opened (mmap) from disk.
inline void expectRejected(const QByteArray& image, quint64 offset, const QString& phrase) {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath("malformed.gguf");
  QFile out(path);
  QVERIFY(out.open(QIODevice::WriteOnly));
  QCOMPARE(out.write(image), image.size());
  out.close();

  for (bool fromDisk : {false, true}) {
    const QString name = fromDisk ? path : QStringLiteral("buffer.gguf");
    try {
      if (fromDisk)
        ember::gguf::GgufFile::open(path.toStdString());
      else
        ember::gguf::GgufFile::fromBuffer(toBytes(image), name.toStdString());
      QFAIL(qPrintable("accepted a malformed file (" + name + ")"));
    } catch (const ember::gguf::GgufError& e) {
      const QString what = QString::fromStdString(e.what());
      QVERIFY2(what.startsWith(name + ": at byte " + QString::number(offset) + ": "),
               qPrintable("offset: " + what));
      QCOMPARE(quint64(e.offset()), offset);
      QCOMPARE(QString::fromStdString(e.file()), name);
      QVERIFY2(what.contains(phrase), qPrintable("phrase '" + phrase + "' missing: " + what));
    }
  }
}

}  // namespace ember::test
