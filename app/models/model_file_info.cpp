#include "models/model_file_info.h"

#include <QFileInfo>

#include "ember/model_file.h"

namespace ember::app {

ModelFileInfo describeModelFile(const QString& path) {
  ModelFileInfo info;
  info.path = path;
  info.fileName = QFileInfo(path).fileName();
  info.fileSize = QFileInfo(path).size();
  try {
    const ModelFile file = inspectModelFile(path.toStdString());
    info.architecture = QString::fromStdString(file.architecture);
    info.parameterCount = static_cast<qint64>(file.parameterCount);
    info.quantization = QString::fromStdString(file.mainType);
    info.contextLength = file.trainedContext;
    info.weightBytes = file.weightBytes;
    info.configured = file.configured();
    info.configError = QString::fromStdString(file.configError);
    info.configContext = file.configContext;
    info.kvBytesPerToken = file.kvBytesPerToken;
    info.workspaceBytes = file.workspaceBytes;
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
