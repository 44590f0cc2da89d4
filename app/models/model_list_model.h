#pragma once
// The model picker: the GGUF files found in the models folders, then an "Open file..." row.
#include <QAbstractListModel>
#include <QList>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include "models/model_file_info.h"

namespace ember::app {

class ModelListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by the AppController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles {
    PathRole = Qt::UserRole + 1,
    FileNameRole,
    SummaryRole,  // "llama · 135M · Q4_1 · ctx 8192 · 92 MB · needs ~160 MB"
    ErrorRole,
    IsOpenFileRole,  // the last row, which opens a file dialog
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

 signals:
  void countChanged();

 private:
  QList<ModelFileInfo> files_;
};

QString modelSummary(const ModelFileInfo& info);

}  // namespace ember::app
