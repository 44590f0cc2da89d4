#pragma once
// The app's "Local API server": the OpenAI-compatible server (openai/server) over the app's own
// EngineHost, so API clients and the chats share one engine, its batches and its prefix cache.
// Off by default; its settings (on/off, port, key) persist in QSettings. Exposed to QML as the
// singleton `LocalApiServer` (main() creates the instance over the app's engine; without one,
// e.g. in QML-only tests, it reports itself unavailable).
#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>
#include <memory>

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

 public:
  // Reads the saved settings and starts serving when they say so. host may be null (unavailable).
  explicit LocalApiServer(EngineHost* host, QObject* parent = nullptr);
  ~LocalApiServer() override;

  static void setInstance(LocalApiServer* server);
  static LocalApiServer* create(QQmlEngine*, QJSEngine*);

  bool available() const { return host_ != nullptr; }
  bool enabled() const { return enabled_; }
  int port() const { return port_; }
  QString apiKey() const { return apiKey_; }
  QString address() const;  // where clients reach it, empty while off
  QString error() const { return error_; }

  void setEnabled(bool on);
  void setPort(int port);           // restarts a running server on the new port
  void setApiKey(const QString& key);  // empty: no key (the server stays on loopback)
  Q_INVOKABLE QString generateKey();   // a new random key, set and returned

 signals:
  void changed();

 private:
  void restart();
  void save() const;

  EngineHost* host_ = nullptr;
  std::unique_ptr<openai::ApiServer> server_;
  bool enabled_ = false;
  int port_ = 8080;
  QString apiKey_;
  QString error_;
};

}  // namespace ember::app
