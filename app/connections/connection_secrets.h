#pragma once
// Where the API key of a remote server is kept: the desktop keyring through QtKeychain (Secret
// Service on Linux), or, where no keyring service runs, a file only the user can read (mode 0600
// in a 0700 folder under the app's data folder). Never in the settings file, never in a log.
// Calls are asynchronous (the keyring answers over D-Bus); callbacks run on the calling thread.
#include <QObject>
#include <QString>
#include <functional>

namespace ember::app {

enum class KeyStorage { None, Keyring, File };
QString keyStorageLabel(KeyStorage storage);  // what the UI says about where the key is

class ConnectionSecrets : public QObject {
  Q_OBJECT
 public:
  // keyDir: the folder for the file fallback; service: the keyring's service name.
  ConnectionSecrets(QString keyDir, QString service = QStringLiteral("Ember"),
                    QObject* parent = nullptr);

  // useKeyring = false skips the keyring (tests, or a user who turned it off).
  void setUseKeyring(bool use) { useKeyring_ = use; }

  using StoreDone = std::function<void(KeyStorage where, QString error)>;
  using LoadDone = std::function<void(QString key, QString error)>;
  void store(const QString& id, const QString& key, StoreDone done);
  void load(const QString& id, KeyStorage where, LoadDone done);
  void remove(const QString& id, KeyStorage where);

  // The file fallback, synchronous (also used directly by tests).
  bool writeKeyFile(const QString& id, const QString& key, QString* error) const;
  QString readKeyFile(const QString& id, QString* error) const;
  QString keyFilePath(const QString& id) const;

 private:
  QString keyDir_;
  QString service_;
  bool useKeyring_ = true;
};

}  // namespace ember::app
