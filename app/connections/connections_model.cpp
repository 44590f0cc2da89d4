#include "connections_model.h"

#include <QPointer>
#include <QStandardPaths>
#include <QUuid>

#include "client/remote_generator.h"
#include "logging/app_log.h"
#include "ember/error.h"

namespace ember::app {

namespace {
QString defaultKeyDir() {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
         QStringLiteral("/keys");
}
}  // namespace

ConnectionsModel::ConnectionsModel(QObject* parent)
    : QAbstractListModel(parent), settings_(std::make_unique<QSettings>()),
      secrets_(defaultKeyDir()) {
  load();
}

ConnectionsModel::ConnectionsModel(const QString& settingsPath, const QString& keyDir,
                                   bool useKeyring, QObject* parent)
    : QAbstractListModel(parent),
      settings_(std::make_unique<QSettings>(settingsPath, QSettings::IniFormat)),
      secrets_(keyDir) {
  secrets_.setUseKeyring(useKeyring);
  load();
}

ConnectionsModel::~ConnectionsModel() {
  for (QThread* t : tests_) {
    t->wait();
    delete t;
  }
}

void ConnectionsModel::load() {
  const int n = settings_->beginReadArray(QStringLiteral("connections"));
  for (int i = 0; i < n; ++i) {
    settings_->setArrayIndex(i);
    Connection c;
    c.id = settings_->value(QStringLiteral("id")).toString();
    c.name = settings_->value(QStringLiteral("name")).toString();
    c.baseUrl = settings_->value(QStringLiteral("baseUrl")).toString();
    c.keyStorage = static_cast<KeyStorage>(settings_->value(QStringLiteral("keyStorage")).toInt());
    if (!c.id.isEmpty() && !c.baseUrl.isEmpty()) connections_.push_back(c);
  }
  settings_->endArray();
}

void ConnectionsModel::reload() {
  std::vector<Connection> before = std::move(connections_);
  beginResetModel();
  connections_.clear();
  settings_->sync();
  load();
  for (Connection& c : connections_)
    for (const Connection& old : before)
      if (old.id == c.id && !old.testing) {
        c.tested = old.tested, c.reachable = old.reachable, c.status = old.status, c.models = old.models;
        c.modelContexts = old.modelContexts;
        c.roundTripMs = old.roundTripMs;
      }
  endResetModel();
  emit countChanged();
}

void ConnectionsModel::loadKey(const QString& id, ConnectionSecrets::LoadDone done) {
  const int row = rowOf(id);
  if (row < 0) {
    done({}, tr("The connection was removed."));
    return;
  }
  secrets_.load(id, connections_[size_t(row)].keyStorage, std::move(done));
}

void ConnectionsModel::save() {
  settings_->beginWriteArray(QStringLiteral("connections"), int(connections_.size()));
  for (size_t i = 0; i < connections_.size(); ++i) {
    settings_->setArrayIndex(int(i));
    const Connection& c = connections_[i];
    settings_->setValue(QStringLiteral("id"), c.id);
    settings_->setValue(QStringLiteral("name"), c.name);
    settings_->setValue(QStringLiteral("baseUrl"), c.baseUrl);
    settings_->setValue(QStringLiteral("keyStorage"), int(c.keyStorage));  // never the key
  }
  settings_->endArray();
  settings_->sync();
}

int ConnectionsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(connections_.size());
}

QVariant ConnectionsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Connection& c = connections_[size_t(index.row())];
  switch (role) {
    case NameRole: return c.name;
    case BaseUrlRole: return c.baseUrl;
    case KeyStorageRole: return keyStorageLabel(c.keyStorage);
    case TestingRole: return c.testing;
    case ReachableRole: return c.reachable;
    case StatusRole: return c.status;
    case ModelsRole: return c.models;
    case RoundTripRole: return c.roundTripMs;
    default: return {};
  }
}

QHash<int, QByteArray> ConnectionsModel::roleNames() const {
  return {{NameRole, "name"},         {BaseUrlRole, "baseUrl"}, {KeyStorageRole, "keyStorage"},
          {TestingRole, "testing"},   {ReachableRole, "reachable"}, {StatusRole, "status"},
          {ModelsRole, "models"},     {RoundTripRole, "roundTripMs"}};
}

int ConnectionsModel::rowOf(const QString& id) const {
  for (size_t i = 0; i < connections_.size(); ++i)
    if (connections_[i].id == id) return int(i);
  return -1;
}

QString ConnectionsModel::add(const QString& name, const QString& baseUrl, const QString& apiKey) {
  const QString url = baseUrl.trimmed();
  if (!url.startsWith(QLatin1String("http://")) && !url.startsWith(QLatin1String("https://")))
    return tr("The address must start with http:// or https://, for example "
              "http://192.168.1.20:8000/v1");
  Connection c;
  c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
  c.name = name.trimmed().isEmpty() ? url : name.trimmed();
  c.baseUrl = url;
  c.status = tr("not tested yet");
  const int row = rowCount();
  beginInsertRows({}, row, row);
  connections_.push_back(c);
  endInsertRows();
  emit countChanged();
  save();
  QPointer<ConnectionsModel> self(this);
  const QString id = c.id;
  secrets_.store(id, apiKey, [self, id](KeyStorage where, QString error) {
    if (!self) return;
    const int r = self->rowOf(id);
    if (r < 0) return;
    self->connections_[size_t(r)].keyStorage = where;
    self->save();
    emit self->dataChanged(self->index(r), self->index(r), {KeyStorageRole});
    emit self->keyStored(r, keyStorageLabel(where), error);
  });
  return {};
}

void ConnectionsModel::remove(int row) {
  if (row < 0 || row >= rowCount()) return;
  secrets_.remove(connections_[size_t(row)].id, connections_[size_t(row)].keyStorage);
  beginRemoveRows({}, row, row);
  connections_.erase(connections_.begin() + row);
  endRemoveRows();
  emit countChanged();
  save();
}

void ConnectionsModel::test(int row) {
  if (row < 0 || row >= rowCount() || connections_[size_t(row)].testing) return;
  Connection& c = connections_[size_t(row)];
  c.testing = true;
  c.status = tr("testing…");
  emit dataChanged(index(row), index(row));
  QPointer<ConnectionsModel> self(this);
  const QString id = c.id, name = c.name, url = c.baseUrl;
  secrets_.load(id, c.keyStorage, [self, id, name, url](QString key, QString keyError) {
    if (!self) return;
    if (!keyError.isEmpty()) {
      self->finishTest(id, false, keyError, {}, {}, 0);
      return;
    }
    // The network calls run on a thread of their own; the result comes back queued.
    QThread* thread = QThread::create([self, id, name, url, key] {
      bool reachable = false;
      QString status;
      QStringList models;
      QList<int> contexts;
      double rtt = 0;
      try {
        openai::RemoteServerOptions o;
        o.name = name.toStdString();
        o.baseUrl = url.toStdString();
        o.apiKey = key.toStdString();
        openai::RemoteGenerator remote(o);
        const auto start = Clock::now();
        for (const auto& m : remote.fetchModels()) {
          models << QString::fromStdString(m.id);
          contexts << int(m.contextLength);
        }
        rtt = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        reachable = true;
        status = QObject::tr("%n model(s), round trip %1 ms", nullptr, int(models.size()))
                     .arg(rtt, 0, 'f', 0);
      } catch (const std::exception& e) {
        status = QString::fromUtf8(e.what());
      }
      QMetaObject::invokeMethod(
          self.data(),
          [self, id, reachable, status, models, contexts, rtt] {
            if (self) self->finishTest(id, reachable, status, models, contexts, rtt);
          },
          Qt::QueuedConnection);
    });
    self->tests_.push_back(thread);
    thread->start();
  });
}

void ConnectionsModel::finishTest(const QString& id, bool reachable, const QString& status,
                                  const QStringList& models, const QList<int>& contexts,
                                  double roundTripMs) {
  const int row = rowOf(id);
  if (row < 0) return;
  Connection& c = connections_[size_t(row)];
  c.testing = false;
  c.tested = true;
  c.reachable = reachable;
  c.status = status;
  c.models = models;
  c.modelContexts = contexts;
  c.roundTripMs = roundTripMs;
  // The outcome goes to the log for support; the key never does (the status is built from the
  // server's answer, which names no key).
  const QString line = QStringLiteral("connection test: %1 (%2): %3").arg(c.name, c.baseUrl, status);
  if (reachable)
    log::info(line);
  else
    log::warn(line);
  emit dataChanged(index(row), index(row));
  emit tested(row);
}

}  // namespace ember::app
