#pragma once
// Settings → Connections: the remote OpenAI-compatible servers the user added (name, base URL,
// key), kept in the settings file without their keys (ConnectionSecrets holds those), and
// "Test connection": the models the server offers and the round trip, measured off the GUI
// thread. Only the GUI thread touches the model; a test posts its result back to it.
#include <QAbstractListModel>
#include <QSettings>
#include <QThread>
#include <QtQml/qqmlregistration.h>

#include <memory>
#include <vector>

#include "connection_secrets.h"

namespace ember::app {

struct Connection {
  QString id;  // stable, for the key's name in the keyring
  QString name;
  QString baseUrl;
  KeyStorage keyStorage = KeyStorage::None;
  // The last test:
  bool testing = false;
  bool tested = false;  // a test has answered since the app started
  bool reachable = false;
  QString status;
  QStringList models;
  QList<int> modelContexts;  // beside models: each one's context length, 0 when not reported
  double roundTripMs = 0;
};

class ConnectionsModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Role { NameRole = Qt::UserRole + 1, BaseUrlRole, KeyStorageRole, TestingRole, ReachableRole,
              StatusRole, ModelsRole, RoundTripRole };
  explicit ConnectionsModel(QObject* parent = nullptr);
  // settingsPath/keyDir: where the list and the fallback key files live (tests use a temp dir).
  ConnectionsModel(const QString& settingsPath, const QString& keyDir, bool useKeyring,
                   QObject* parent = nullptr);
  ~ConnectionsModel() override;  // waits for running tests

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Returns an error message for the form, or "" when added (the key is stored asynchronously;
  // keyStorageChanged tells where it went).
  Q_INVOKABLE QString add(const QString& name, const QString& baseUrl, const QString& apiKey);
  Q_INVOKABLE void remove(int row);
  Q_INVOKABLE void test(int row);

  const Connection& at(int row) const { return connections_[size_t(row)]; }
  int rowOf(const QString& id) const;
  // Reads the list again from the settings file (another ConnectionsModel may have changed it);
  // the last test results of connections still listed are kept.
  void reload();
  // The connection's key, from wherever it is kept; `done` runs on this thread.
  void loadKey(const QString& id, ConnectionSecrets::LoadDone done);

 signals:
  void countChanged();
  void keyStored(int row, const QString& where, const QString& error);
  void tested(int row);

 private:
  void load();
  void save();
  void finishTest(const QString& id, bool reachable, const QString& status, const QStringList& models,
                  const QList<int>& contexts, double roundTripMs);

  std::unique_ptr<QSettings> settings_;
  ConnectionSecrets secrets_;
  std::vector<Connection> connections_;
  std::vector<QThread*> tests_;
};

}  // namespace ember::app
