#include "server/local_api_server.h"

#include <QDir>
#include <QPointer>
#include <QRandomGenerator>
#include <QSettings>
#include <QStandardPaths>
#include <QtQml/qjsengine.h>

#include "ember/engine_host.h"
#include "server/api_server.h"

namespace ember::app {
namespace {

QPointer<LocalApiServer> g_instance;
constexpr auto kGroup = "localApiServer";
constexpr auto kSecretId = "local-api-server";  // its name in the keyring / key folder

QString keyDir() {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
         QStringLiteral("/keys");
}

}  // namespace

LocalApiServer::LocalApiServer(EngineHost* host, QObject* parent, bool useKeyring)
    : QObject(parent), host_(host), secrets_(new ConnectionSecrets(keyDir(), QStringLiteral("Ember"), this)) {
  secrets_->setUseKeyring(useKeyring);
  QSettings settings;
  settings.beginGroup(QLatin1String(kGroup));
  port_ = settings.value(QStringLiteral("port"), 8080).toInt();
  wantEnabled_ = settings.value(QStringLiteral("enabled"), false).toBool();
  keyStorage_ = static_cast<KeyStorage>(settings.value(QStringLiteral("keyStorage"), 0).toInt());
  const QString inSettings = settings.value(QStringLiteral("apiKey")).toString();
  if (!inSettings.isEmpty()) {
    // Kept in the settings file by an earlier version: moved into the keyring (or key file).
    settings.remove(QStringLiteral("apiKey"));
    keyArrived(inSettings, {});
    storeKey();
    return;
  }
  if (!host_) return;
  secrets_->load(QLatin1String(kSecretId), keyStorage_,
                 [this](const QString& key, const QString& error) { keyArrived(key, error); });
}

void LocalApiServer::keyArrived(const QString& key, const QString& error) {
  apiKey_ = key;
  keyLoaded_ = true;
  if (!error.isEmpty()) {
    // Never serve without the key the user set: stay off and say why.
    error_ = tr("The API key could not be read (%1); set a key to turn the server on.").arg(error);
    wantEnabled_ = false;
    emit changed();
    return;
  }
  if (wantEnabled_ && host_) setEnabled(true);
  else emit changed();
}

QString LocalApiServer::keyStorageText() const {
  return keyStorage_ == KeyStorage::None ? QString() : tr("Key kept %1.").arg(keyStorageLabel(keyStorage_));
}

void LocalApiServer::storeKey() {
  secrets_->store(QLatin1String(kSecretId), apiKey_, [this](KeyStorage where, const QString& error) {
    keyStorage_ = where;
    if (!error.isEmpty()) error_ = tr("The API key could not be saved: %1").arg(error);
    save();
    emit changed();
  });
}

LocalApiServer::~LocalApiServer() {
  if (server_) server_->stop();  // before the engine host it serves goes away
}

void LocalApiServer::setInstance(LocalApiServer* server) { g_instance = server; }

LocalApiServer* LocalApiServer::create(QQmlEngine*, QJSEngine*) {
  if (!g_instance) g_instance = new LocalApiServer(nullptr);  // unavailable; QML owns it
  else QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
  return g_instance;
}

QString LocalApiServer::address() const {
  return server_ ? QString::fromStdString(server_->address()) + QStringLiteral("/v1") : QString();
}

void LocalApiServer::setEnabled(bool on) {
  if (!keyLoaded_) {  // the keyring has not answered yet: on once it has
    wantEnabled_ = on;
    return;
  }
  wantEnabled_ = on;
  if (on == enabled_ && (server_ != nullptr) == on) return;
  enabled_ = on && host_;
  restart();
  save();
}

void LocalApiServer::setPort(int port) {
  if (port == port_ || port < 1 || port > 65535) return;
  port_ = port;
  if (enabled_) restart();
  save();
  emit changed();
}

void LocalApiServer::setApiKey(const QString& key) {
  const QString trimmed = key.trimmed();
  if (trimmed == apiKey_) return;
  apiKey_ = trimmed;
  keyLoaded_ = true;  // the user's key replaces one still being read
  if (enabled_) restart();
  storeKey();
  emit changed();
}

QString LocalApiServer::generateKey() {
  QString key = QStringLiteral("sk-ember-");
  for (int i = 0; i < 4; ++i)
    key += QString::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, '0');
  setApiKey(key);
  return key;
}

void LocalApiServer::restart() {
  if (server_) server_->stop();
  server_.reset();
  error_.clear();
  if (enabled_ && host_) {
    openai::ServerOptions options;
    options.host = "127.0.0.1";  // the app serves this machine only
    options.port = port_;
    if (!apiKey_.isEmpty()) options.apiKeys = {apiKey_.toStdString()};
    options.queueLimit = 16;
    const QString dataDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(QDir(dataDir).filePath(QStringLiteral("logs")));
    options.usageDatabase = QDir(dataDir).filePath(QStringLiteral("api-usage.sqlite")).toStdString();
    options.logFile = QDir(dataDir).filePath(QStringLiteral("logs/api-server.log")).toStdString();
    try {
      auto server = std::make_unique<openai::ApiServer>(*host_, options);
      server->start();
      server_ = std::move(server);
    } catch (const std::exception& e) {
      error_ = QString::fromUtf8(e.what());
      enabled_ = false;
    }
  }
  emit changed();
}

void LocalApiServer::save() const {
  if (!host_) return;
  QSettings settings;
  settings.beginGroup(QLatin1String(kGroup));
  settings.setValue(QStringLiteral("enabled"), enabled_);
  settings.setValue(QStringLiteral("port"), port_);
  settings.setValue(QStringLiteral("keyStorage"), static_cast<int>(keyStorage_));
}

}  // namespace ember::app
