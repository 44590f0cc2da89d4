#include "models/model_list_model.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <algorithm>
#include <tuple>

namespace ember::app {

QString modelSummary(const ModelFileInfo& info) {
  if (!info.error.isEmpty()) return info.error;
  return QStringLiteral("%1 · %2 · %3 · ctx %4 · %5")
      .arg(info.architecture, formatParameterCount(info.parameterCount), info.quantization)
      .arg(info.contextLength)
      .arg(formatBytes(info.fileSize));
}

QString remoteModelSummary(const RemoteModelEntry& entry) {
  QString line = QObject::tr("remote · %1 · %2").arg(entry.server, entry.baseUrl);
  if (entry.contextLength > 0) line += QStringLiteral(" · ctx %1").arg(entry.contextLength);
  return line;
}

int ModelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(files_.size() + remote_.size()) + 1;
}

const RemoteModelEntry* ModelListModel::remoteAt(int row) const {
  const int at = row - static_cast<int>(files_.size());
  return at >= 0 && at < remote_.size() ? &remote_[at] : nullptr;
}

void ModelListModel::setRemoteModels(QList<RemoteModelEntry> models) {
  std::sort(models.begin(), models.end(), [](const RemoteModelEntry& a, const RemoteModelEntry& b) {
    return std::tie(a.server, a.model) < std::tie(b.server, b.model);
  });
  beginResetModel();
  remote_ = std::move(models);
  endResetModel();
  emit countChanged();
}

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const bool openFile = index.row() == files_.size() + remote_.size();
  if (role == IsOpenFileRole) return openFile;
  if (const RemoteModelEntry* r = remoteAt(index.row())) {
    switch (role) {
      case IsRemoteRole: return true;
      case ServerRole: return r->server;
      case Qt::DisplayRole:
      case FileNameRole: return r->model;
      case SummaryRole: return remoteModelSummary(*r);
      case FitsRole: return true;
      case PathRole:
      case ErrorRole:
      case FitRole: return QString();
      default: return {};
    }
  }
  if (role == IsRemoteRole) return false;
  if (role == ServerRole) return QString();
  if (openFile) {
    if (role == Qt::DisplayRole || role == FileNameRole) return tr("Open file...");
    if (role == FitsRole) return true;
    return role == PathRole || role == SummaryRole || role == ErrorRole || role == FitRole
               ? QVariant(QString())
               : QVariant();
  }
  const ModelFileInfo& f = files_.at(index.row());
  switch (role) {
    case PathRole: return f.path;
    case Qt::DisplayRole:
    case FileNameRole: return f.fileName;
    case SummaryRole: return modelSummary(f);
    case ErrorRole: return f.error;
    case FitRole: return memoryFit(f, fitSettings_).line;
    case FitsRole: {
      const MemoryFit fit = memoryFit(f, fitSettings_);
      return !fit.known || fit.fits;
    }
    default: return {};
  }
}

QHash<int, QByteArray> ModelListModel::roleNames() const {
  return {{PathRole, "path"}, {FileNameRole, "fileName"}, {SummaryRole, "summary"},
          {ErrorRole, "errorText"}, {IsOpenFileRole, "isOpenFile"}, {FitRole, "fitText"},
          {FitsRole, "fits"}, {IsRemoteRole, "isRemote"}, {ServerRole, "server"}};
}

void ModelListModel::scan(const QStringList& folders) {
  QList<ModelFileInfo> found;
  QSet<QString> seen;
  for (const QString& folder : folders) {
    const QFileInfoList entries =
        QDir(folder).entryInfoList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Name);
    for (const QFileInfo& entry : entries) {
      const QString canonical = entry.canonicalFilePath();
      if (seen.contains(canonical)) continue;
      seen.insert(canonical);
      found << describeModelFile(entry.absoluteFilePath());
    }
  }
  setFiles(found);
}

void ModelListModel::setFiles(const QList<ModelFileInfo>& files) {
  beginResetModel();
  files_ = files;
  endResetModel();
  emit countChanged();
}

void ModelListModel::setFitSettings(const MemoryFitSettings& settings) {
  fitSettings_ = settings;
  if (!files_.isEmpty())
    emit dataChanged(index(0), index(static_cast<int>(files_.size()) - 1), {FitRole, FitsRole});
}

int ModelListModel::addFile(const ModelFileInfo& file) {
  for (int i = 0; i < files_.size(); ++i)
    if (files_[i].path == file.path) return i;
  // Inserted after the other files, before the remote models.
  const int at = static_cast<int>(files_.size());
  beginInsertRows({}, at, at);
  files_.append(file);
  endInsertRows();
  emit countChanged();
  return at;
}

}  // namespace ember::app
