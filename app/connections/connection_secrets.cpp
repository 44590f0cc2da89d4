#include "connection_secrets.h"

#include <QDir>
#include <QFile>
#include <QFileDevice>
#include <qt6keychain/keychain.h>

namespace ember::app {

QString keyStorageLabel(KeyStorage storage) {
  switch (storage) {
    case KeyStorage::Keyring: return QObject::tr("in the system keyring");
    case KeyStorage::File: return QObject::tr("in a file only you can read (no keyring service)");
    case KeyStorage::None: break;
  }
  return QObject::tr("no key");
}

ConnectionSecrets::ConnectionSecrets(QString keyDir, QString service, QObject* parent)
    : QObject(parent), keyDir_(std::move(keyDir)), service_(std::move(service)) {}

QString ConnectionSecrets::keyFilePath(const QString& id) const {
  return keyDir_ + QLatin1Char('/') + id + QStringLiteral(".key");
}

bool ConnectionSecrets::writeKeyFile(const QString& id, const QString& key, QString* error) const {
  QDir().mkpath(keyDir_);
  QFile::setPermissions(keyDir_, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                     QFileDevice::ExeOwner);
  QFile file(keyFilePath(id));
  // Created 0600 before the key is written, so it is never readable by others.
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate, QFileDevice::ReadOwner |
                                                                 QFileDevice::WriteOwner)) {
    *error = QObject::tr("cannot write %1: %2").arg(file.fileName(), file.errorString());
    return false;
  }
  file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
  file.write(key.toUtf8());
  return true;
}

QString ConnectionSecrets::readKeyFile(const QString& id, QString* error) const {
  QFile file(keyFilePath(id));
  if (!file.open(QIODevice::ReadOnly)) {
    *error = QObject::tr("cannot read the key file %1").arg(file.fileName());
    return {};
  }
  return QString::fromUtf8(file.readAll());
}

void ConnectionSecrets::store(const QString& id, const QString& key, StoreDone done) {
  if (key.isEmpty()) {
    remove(id, KeyStorage::Keyring);
    QFile::remove(keyFilePath(id));
    done(KeyStorage::None, {});
    return;
  }
  auto fallback = [this, id, key, done] {
    QString error;
    if (writeKeyFile(id, key, &error))
      done(KeyStorage::File, {});
    else
      done(KeyStorage::None, error);
  };
  if (!useKeyring_) {
    fallback();
    return;
  }
  auto* job = new QKeychain::WritePasswordJob(service_, this);
  job->setKey(id);
  job->setTextData(key);
  job->setInsecureFallback(false);  // never the plain settings file
  connect(job, &QKeychain::Job::finished, this, [this, id, done, fallback](QKeychain::Job* j) {
    if (j->error() == QKeychain::NoError) {
      QFile::remove(keyFilePath(id));  // a key moved into the keyring leaves no file behind
      done(KeyStorage::Keyring, {});
    } else {
      fallback();  // no keyring service (NoBackendAvailable, or D-Bus without one)
    }
  });
  job->start();
}

void ConnectionSecrets::load(const QString& id, KeyStorage where, LoadDone done) {
  if (where == KeyStorage::None) {
    done({}, {});
    return;
  }
  if (where == KeyStorage::File) {
    QString error;
    const QString key = readKeyFile(id, &error);
    done(key, error);
    return;
  }
  auto* job = new QKeychain::ReadPasswordJob(service_, this);
  job->setKey(id);
  job->setInsecureFallback(false);
  connect(job, &QKeychain::Job::finished, this, [done](QKeychain::Job* j) {
    auto* read = static_cast<QKeychain::ReadPasswordJob*>(j);
    if (read->error() == QKeychain::NoError)
      done(read->textData(), {});
    else
      done({}, QObject::tr("the keyring has no key for this server: %1").arg(read->errorString()));
  });
  job->start();
}

void ConnectionSecrets::remove(const QString& id, KeyStorage where) {
  if (where == KeyStorage::File) {
    QFile::remove(keyFilePath(id));
    return;
  }
  if (where != KeyStorage::Keyring || !useKeyring_) return;
  auto* job = new QKeychain::DeletePasswordJob(service_, this);
  job->setKey(id);
  job->start();
}

}  // namespace ember::app
