// Settings → Connections: servers kept without their keys in the settings file, keys in the
// keyring or (no keyring service here) a file of mode 0600 in a 0700 folder, the UI told which,
// and "Test connection" against the misbehaving upstream (tests/openai/client), whose model list
// and 401 are known.
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include "common/test_paths.h"
#include "connections/connections_model.h"

using namespace ember::app;

namespace {
int modeOf(const QString& path) {  // the POSIX permission bits
  struct stat st {};
  if (::stat(QFile::encodeName(path).constData(), &st) != 0) return -1;
  return int(st.st_mode & 0777);
}
}  // namespace

class TestConnectionsModel : public QObject {
  Q_OBJECT
  QProcess upstream_;
  QString base_;
  QTemporaryDir dir_;

  QString settingsPath() const { return dir_.filePath("settings.ini"); }
  QString keyDir() const { return dir_.filePath("keys"); }

 private slots:
  void initTestCase() {
    upstream_.start(EMBER_PYTHON, {ember::test::sourceDir() +
                                       "/tests/openai/client/misbehaving_upstream.py",
                                   "--api-key", "sk-conn-secret", "--lifetime", "60"});
    QVERIFY(upstream_.waitForReadyRead(10000));
    base_ = "http://127.0.0.1:" + QString::number(upstream_.readLine().trimmed().toInt()) + "/v1";
  }
  void cleanupTestCase() {
    upstream_.closeWriteChannel();
    if (!upstream_.waitForFinished(3000)) upstream_.kill();
  }

  void rejectsABadAddress() {
    ConnectionsModel model(settingsPath(), keyDir(), false);
    QVERIFY(model.add("x", "192.168.1.2:8000", "").contains("must start with http://"));
    QCOMPARE(model.rowCount(), 0);
  }

  void keyGoesToAPrivateFileNeverToSettings() {
    {
      ConnectionsModel model(settingsPath(), keyDir(), /*useKeyring=*/false);
      QSignalSpy stored(&model, &ConnectionsModel::keyStored);
      QCOMPARE(model.add("team", base_, "sk-conn-secret"), QString());
      QVERIFY(stored.count() == 1 || stored.wait(5000));
      QCOMPARE(model.at(0).keyStorage, KeyStorage::File);
      QVERIFY(stored.at(0).at(1).toString().contains("file only you can read"));
      const QString keyFile = keyDir() + "/" + model.at(0).id + ".key";
      QCOMPARE(modeOf(keyFile), 0600);
      QCOMPARE(modeOf(keyDir()), 0700);
    }
    QFile settings(settingsPath());
    QVERIFY(settings.open(QIODevice::ReadOnly));
    const QByteArray text = settings.readAll();
    QVERIFY(text.contains(base_.toUtf8()));
    QVERIFY(!text.contains("sk-conn-secret"));
    ConnectionsModel reloaded(settingsPath(), keyDir(), false);  // the list survives a restart
    QCOMPARE(reloaded.rowCount(), 1);
    QCOMPARE(reloaded.at(0).name, QString("team"));
    QCOMPARE(reloaded.at(0).keyStorage, KeyStorage::File);
  }

  void testListsModelsAndRoundTrip() {
    ConnectionsModel model(settingsPath(), keyDir(), false);
    QSignalSpy tested(&model, &ConnectionsModel::tested);
    model.test(0);
    QVERIFY(tested.wait(15000));
    QVERIFY2(model.at(0).reachable, qPrintable(model.at(0).status));
    QVERIFY(model.at(0).models.contains("good"));
    QCOMPARE(model.at(0).models.size(), 11);
    QVERIFY2(model.at(0).status.contains("round trip"), qPrintable(model.at(0).status));
    QVERIFY(model.at(0).roundTripMs > 0);
  }

  void wrongKeySaysWhy() {
    ConnectionsModel model(settingsPath(), keyDir(), false);
    QSignalSpy stored(&model, &ConnectionsModel::keyStored);
    QCOMPARE(model.add("wrong", base_, "sk-nope"), QString());
    QVERIFY(stored.count() == 1 || stored.wait(5000));
    QSignalSpy tested(&model, &ConnectionsModel::tested);
    model.test(1);
    QVERIFY(tested.wait(15000));
    QVERIFY(!model.at(1).reachable);
    QVERIFY2(model.at(1).status.contains("HTTP 401"), qPrintable(model.at(1).status));
    QVERIFY(!model.at(1).status.contains("sk-nope"));
    const QString keyFile = keyDir() + "/" + model.at(1).id + ".key";
    model.remove(1);
    QVERIFY(!QFile::exists(keyFile));  // removing the server removes its key
    QCOMPARE(model.rowCount(), 1);
  }

  // With the keyring asked for but no keyring service running (no D-Bus session here), the key
  // still lands in the private file and the row says so.
  void noKeyringServiceFallsBackToTheFile() {
    if (!qEnvironmentVariable("DBUS_SESSION_BUS_ADDRESS").isEmpty())
      QSKIP("a D-Bus session runs here: the keyring may take the key");
    ConnectionsModel model(settingsPath(), keyDir(), /*useKeyring=*/true);
    QSignalSpy stored(&model, &ConnectionsModel::keyStored);
    QCOMPARE(model.add("ring", base_, "sk-ring"), QString());
    QVERIFY(stored.count() == 1 || stored.wait(30000));
    QCOMPARE(model.at(model.rowCount() - 1).keyStorage, KeyStorage::File);
  }
};

QTEST_GUILESS_MAIN(TestConnectionsModel)
#include "test_connections_model.moc"
