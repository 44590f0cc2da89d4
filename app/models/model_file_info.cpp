#include "models/model_file_info.h"

#include <QFileInfo>
#include <map>

#include "gguf/gguf_file.h"

namespace ember::app {

ModelFileInfo describeModelFile(const QString& path, qint64 contextLength, int sequences) {
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
    const qint64 layers = file->findInt(arch + ".block_count").value_or(0);
    const qint64 embedding = file->findInt(arch + ".embedding_length").value_or(0);
    const qint64 heads = file->findInt(arch + ".attention.head_count").value_or(1);
    const qint64 kvHeads = file->findInt(arch + ".attention.head_count_kv").value_or(heads);
    const qint64 headDim =
        file->findInt(arch + ".attention.key_length").value_or(heads > 0 ? embedding / heads : 0);
    qint64 context = contextLength > 0 ? contextLength : qMin<qint64>(info.contextLength, 4096);
    // K and V, f16, per layer, KV head, head dimension, token and sequence.
    const qint64 kvBytes = 2 * layers * kvHeads * headDim * context * sequences * 2;
    info.memoryEstimate = info.fileSize + kvBytes;
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
