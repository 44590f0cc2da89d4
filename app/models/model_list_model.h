#pragma once
// The model picker: the GGUF files found in the models folders, then the models the remote
// servers of Settings → Connections offer, then an "Open file..." row. Each file row says
// whether it fits in the free memory for the current load settings; a remote row names its
// server.
#include <QAbstractListModel>
#include <QList>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include "models/model_file_info.h"
#include "models/model_memory_fit.h"

namespace ember::app {

// A model a remote server offers (from its /v1/models).
struct RemoteModelEntry {
  QString connectionId;  // the Connections row it came from
  QString server;        // the connection's name
  QString baseUrl;
  QString model;         // the server's model id
  int contextLength = 0;  // 0: the server did not say
};

class ModelListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by the AppController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles {
    PathRole = Qt::UserRole + 1,
    FileNameRole,
    SummaryRole,  // "llama · 135M · Q4_1 · ctx 8192 · 92 MB"
    ErrorRole,
    IsOpenFileRole,  // the last row, which opens a file dialog
    FitRole,         // memoryFit(...).line: "fits: needs ...", "too big for ...: ...", or ""
    FitsRole,        // false when the line says it does not fit (true when there is no line)
    IsRemoteRole,    // a model of a remote server
    ServerRole,      // its connection's name ("" for files)
  };
  using QAbstractListModel::QAbstractListModel;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Lists *.gguf in the folders (missing folders are skipped), sorted by name, duplicates once.
  void scan(const QStringList& folders);
  void setFiles(const QList<ModelFileInfo>& files);
  // Adds a file opened from elsewhere (kept until the next scan); returns its row.
  int addFile(const ModelFileInfo& file);
  const QList<ModelFileInfo>& files() const { return files_; }
  // The remote servers' models, listed after the files (sorted by server, then model).
  void setRemoteModels(QList<RemoteModelEntry> models);
  const QList<RemoteModelEntry>& remoteModels() const { return remote_; }
  // The remote entry of a row, or null for a file row or "Open file...".
  const RemoteModelEntry* remoteAt(int row) const;
  // The load settings and free memory the fit lines are for; updates every row's line.
  void setFitSettings(const MemoryFitSettings& settings);
  const MemoryFitSettings& fitSettings() const { return fitSettings_; }

 signals:
  void countChanged();

 private:
  QList<ModelFileInfo> files_;
  QList<RemoteModelEntry> remote_;
  MemoryFitSettings fitSettings_;
};

QString modelSummary(const ModelFileInfo& info);
QString remoteModelSummary(const RemoteModelEntry& entry);  // "remote · gpu box · ctx 32768"

}  // namespace ember::app
