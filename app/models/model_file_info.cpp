#include "models/model_file_info.h"

#include <QFileInfo>
#include <map>

#include "gguf/gguf_file.h"
#include "model/memory_plan.h"

namespace ember::app {

ModelFileInfo describeModelFile(const QString& path) {
  ModelFileInfo info;
  info.path = path;
  info.fileName = QFileInfo(path).fileName();
  info.fileSize = QFileInfo(path).size();
  try {
    const auto file = gguf::GgufFile::open(path.toStdString());
    const std::string arch = file->architecture();
    info.architecture = QString::fromStdString(arch);
    std::map<std::string, uint64_t> bytesByType;
    for (const auto& t : file->tensors()) {
      info.parameterCount += static_cast<qint64>(t.elementCount);
      bytesByType[std::string(ggmlTypeName(t.type))] += t.byteSize;
    }
    uint64_t most = 0;
    for (const auto& [name, bytes] : bytesByType)
      if (bytes > most) { most = bytes; info.quantization = QString::fromStdString(name); }
    info.contextLength = file->findInt(arch + ".context_length").value_or(0);
    info.weightBytes = model::weightBytes(*file);
    try {
      info.config = model::readModelConfig(*file);
    } catch (const std::exception& e) {  // the engine would refuse it the same way at load
      info.configError = QString::fromUtf8(e.what());
    }
  } catch (const std::exception& e) {
    info.error = QString::fromUtf8(e.what());
  }
  return info;
}

QString formatBytes(qint64 bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return QStringLiteral("%1 GB").arg(b / 1e9, 0, 'f', 1);
  if (b >= 1e6) return QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 0);
  return QStringLiteral("%1 kB").arg(b / 1e3, 0, 'f', 0);
}

QString formatParameterCount(qint64 count) {
  const double c = static_cast<double>(count);
  if (c >= 1e9) return QStringLiteral("%1B").arg(c / 1e9, 0, 'f', 1);
  if (c >= 1e6) return QStringLiteral("%1M").arg(c / 1e6, 0, 'f', 0);
  return QString::number(count);
}

}  // namespace ember::app
