#pragma once
// The app's "Local API server": the OpenAI-compatible server (openai/server) over the app's own
// EngineHost, so API clients and the chats share one engine, its batches and its prefix cache.
// Off by default; on/off and port persist in QSettings, the key in the system keyring through
// ConnectionSecrets (the same store as the remote servers' keys: QtKeychain, or a 0600 file
// where no keyring service runs), never in the settings file. Exposed to QML as the
// singleton `LocalApiServer` (main() creates the instance over the app's engine; without one,
// e.g. in QML-only tests, it reports itself unavailable).
#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "connections/connection_secrets.h"

class QQmlEngine;
class QJSEngine;

namespace ember {
class EngineHost;
namespace openai {
class ApiServer;
}
}  // namespace ember

namespace ember::app {

class LocalApiServer : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON
  Q_PROPERTY(bool available READ available CONSTANT)
  Q_PROPERTY(bool enabled READ enabled WRITE setEnabled NOTIFY changed)
  Q_PROPERTY(int port READ port WRITE setPort NOTIFY changed)
  Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY changed)
  Q_PROPERTY(QString address READ address NOTIFY changed)
  Q_PROPERTY(QString error READ error NOTIFY changed)
  Q_PROPERTY(QString keyStorage READ keyStorageText NOTIFY changed)

 public:
  // Reads the saved settings and the key and starts serving when they say so (once the key is
  // read: the keyring answers asynchronously). host may be null (unavailable). useKeyring =
  // false keeps the key in the file fallback only (tests).
  explicit LocalApiServer(EngineHost* host, QObject* parent = nullptr, bool useKeyring = true);
  ~LocalApiServer() override;

  static void setInstance(LocalApiServer* server);
  static LocalApiServer* create(QQmlEngine*, QJSEngine*);

  bool available() const { return host_ != nullptr; }
  bool enabled() const { return enabled_; }
  int port() const { return port_; }
  QString apiKey() const { return apiKey_; }
  QString address() const;  // where clients reach it, empty while off
  QString error() const { return error_; }
  QString keyStorageText() const;  // where the key is kept, for the settings page
  bool keyLoaded() const { return keyLoaded_; }

  void setEnabled(bool on);
  void setPort(int port);           // restarts a running server on the new port
  void setApiKey(const QString& key);  // empty: no key (the server stays on loopback)
  Q_INVOKABLE QString generateKey();   // a new random key, set and returned

 signals:
  void changed();

 private:
  void restart();
  void save() const;
  void storeKey();
  void keyArrived(const QString& key, const QString& error);

  EngineHost* host_ = nullptr;
  std::unique_ptr<openai::ApiServer> server_;
  bool enabled_ = false;
  int port_ = 8080;
  QString apiKey_;
  QString error_;
  ConnectionSecrets* secrets_ = nullptr;  // owned (a child)
  KeyStorage keyStorage_ = KeyStorage::None;
  bool keyLoaded_ = false;    // until then, turning the server on waits for its key
  bool wantEnabled_ = false;
};

}  // namespace ember::app
