// Keys for remote servers in the desktop keyring, against a real Secret Service: a private D-Bus
// session bus (dbus-daemon) and gnome-keyring-daemon on it, its login keyring created and
// unlocked with a test password, in a throwaway HOME (XDG data, config, cache and runtime
// folders) inside the build folder. The app's own code stores the key (ConnectionsModel with the
// app's default settings file and key folder) and a real ember-serve with --api-key answers.
// References, none of them Ember's code: libsecret's `secret-tool` reads the key back from the
// keyring and sees it gone after the server is removed; ember-serve's key check (the stored key
// lists the models, a wrong one gets HTTP 401); the raw bytes of every file under the throwaway
// HOME (settings, app log, server log, the keyring's own files), which must not hold either key,
// plain or base64; and the spdlog output of the app (ember.log) and of the server (its --log-file
// and stderr), which must show the connection tests and the 401 but never a key.
// Without dbus-daemon, gnome-keyring-daemon or secret-tool the test fails under CI and is
// reported as skipped elsewhere, naming the Debian packages.
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>

#include <QDirIterator>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QUuid>
#include <QtTest>

#include "common/test_paths.h"
#include "connections/connections_model.h"
#include "logging/app_log.h"

using namespace ember::app;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr auto kKeyringPassword = "ember test keyring";
constexpr auto kPackages = "Debian packages dbus-daemon dbus-bin gnome-keyring libsecret-tools";

int freePort() {
  QTcpServer probe;
  if (!probe.listen(QHostAddress::LocalHost, 0)) return 0;
  return probe.serverPort();
}

void dieWithTheTest() { ::prctl(PR_SET_PDEATHSIG, SIGTERM); }

QString randomKey(const char* prefix) {
  return QLatin1String(prefix) + QUuid::createUuid().toString(QUuid::Id128);
}
}  // namespace

// A missing prerequisite: fails under CI, skipped with the reason elsewhere.
#define REQUIRE_OR_SKIP(cond, why)                        \
  do {                                                    \
    if (!(cond)) {                                        \
      if (ember::test::underCi()) QFAIL(qPrintable(why)); \
      QSKIP(qPrintable(why));                             \
    }                                                     \
  } while (0)

class TestConnectionKeyring : public QObject {
  Q_OBJECT
  std::unique_ptr<QTemporaryDir> home_;
  QProcess bus_, keyring_, serve_;
  QString secretTool_, dbusSend_;
  QString baseUrl_;
  const QString key_ = randomKey("sk-ring-");
  const QString wrongKey_ = randomKey("sk-wrong-");
  QString goodId_;  // the connection that holds key_

  QString serveLog() const { return home_->filePath("serve.log"); }

  bool secretServiceOwned() {
    QByteArray out;
    ember::test::runProcess(dbusSend_, {"--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                        "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                        "string:org.freedesktop.secrets"},
                            &out, nullptr, {}, 5000);
    return out.contains("boolean true");
  }
  // libsecret's reading of QtKeychain's entry (schema org.qt.keychain: user = the entry's key,
  // server = the service name); empty when there is none.
  QString lookUp(const QString& id) {
    QByteArray out;
    ember::test::runProcess(secretTool_, {"lookup", "server", "Ember", "user", id}, &out, nullptr,
                            {}, 10000);
    return QString::fromUtf8(out);
  }

 private slots:
  void initTestCase() {
    QString missing;
    for (const char* program : {"dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool"})
      if (QStandardPaths::findExecutable(QLatin1String(program)).isEmpty())
        missing += QLatin1String(program) + QLatin1Char(' ');
    REQUIRE_OR_SKIP(missing.isEmpty(),
                    QStringLiteral("no Secret Service to test against: %1missing (%2)")
                        .arg(missing, QLatin1String(kPackages)));
    secretTool_ = QStandardPaths::findExecutable("secret-tool");
    dbusSend_ = QStandardPaths::findExecutable("dbus-send");
    EMBER_REQUIRE_MODEL(model, kModel);

    // The throwaway HOME, inside the build folder (the test binary lies in <build>/bin).
    home_ = std::make_unique<QTemporaryDir>(QCoreApplication::applicationDirPath() +
                                            "/../keyring-home-XXXXXX");
    QVERIFY(home_->isValid());
    const QString run = home_->filePath("run");
    QVERIFY(QDir().mkpath(run));
    QFile::setPermissions(run, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                   QFileDevice::ExeOwner);
    qputenv("HOME", home_->path().toUtf8());
    qputenv("XDG_DATA_HOME", home_->filePath("data").toUtf8());
    qputenv("XDG_CONFIG_HOME", home_->filePath("config").toUtf8());
    qputenv("XDG_CACHE_HOME", home_->filePath("cache").toUtf8());
    qputenv("XDG_RUNTIME_DIR", run.toUtf8());
    qunsetenv("GNOME_KEYRING_CONTROL");
    QCoreApplication::setApplicationName(QStringLiteral("ember"));  // the app's folders' name

    // A session bus of our own, its socket in the throwaway runtime folder.
    bus_.setProgram(QStandardPaths::findExecutable("dbus-daemon"));
    bus_.setArguments({"--session", "--nofork", "--print-address=1", "--address=unix:dir=" + run});
    bus_.setChildProcessModifier(dieWithTheTest);
    bus_.start();
    QVERIFY2(bus_.waitForReadyRead(10000), bus_.readAllStandardError().constData());
    const QByteArray address = bus_.readLine().trimmed();
    QVERIFY(address.startsWith("unix:"));
    qputenv("DBUS_SESSION_BUS_ADDRESS", address);  // before anything in this process uses D-Bus

    // The keyring: --unlock reads the password from stdin and creates the login keyring with it.
    keyring_.setProgram(QStandardPaths::findExecutable("gnome-keyring-daemon"));
    keyring_.setArguments({"--foreground", "--unlock", "--components=secrets"});
    keyring_.setChildProcessModifier(dieWithTheTest);
    keyring_.start();
    QVERIFY(keyring_.waitForStarted());
    keyring_.write(kKeyringPassword);
    keyring_.closeWriteChannel();
    QVERIFY2(QTest::qWaitFor([&] { return secretServiceOwned(); }, 20000),
             keyring_.readAllStandardError().constData());

    // The server, keyed; its log inside HOME so the file scan reads it too.
    const int port = freePort();
    serve_.setProgram(ember::test::builtProgram("ember-serve"));
    serve_.setArguments({"--model", model, "--port", QString::number(port), "--threads", "1",
                         "--context", "512", "--api-key", key_, "--log-file", serveLog()});
    serve_.setProcessChannelMode(QProcess::MergedChannels);
    serve_.setChildProcessModifier(dieWithTheTest);
    serve_.start();
    QVERIFY(serve_.waitForStarted());
    httplib::Client http("127.0.0.1", port);
    QVERIFY(QTest::qWaitFor([&] {
      auto r = http.Get("/health");
      return r && r->status == 200;
    }, 60000));
    baseUrl_ = QStringLiteral("http://127.0.0.1:%1/v1").arg(port);

    log::init(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/logs");
  }

  void cleanupTestCase() {
    log::shutdown();
    for (QProcess* p : {&serve_, &keyring_, &bus_}) {
      if (p->state() == QProcess::NotRunning) continue;
      p->terminate();
      if (!p->waitForFinished(5000)) p->kill();
    }
  }

  void keyGoesToTheKeyringAndLibsecretReadsItBack() {
    ConnectionsModel model;  // the app's own settings file and key folder, under HOME
    QSignalSpy stored(&model, &ConnectionsModel::keyStored);
    QCOMPARE(model.add("ring", baseUrl_, key_), QString());
    QVERIFY(stored.count() == 1 || stored.wait(30000));
    QCOMPARE(stored.at(0).at(2).toString(), QString());  // no error
    QCOMPARE(model.at(0).keyStorage, KeyStorage::Keyring);
    QCOMPARE(stored.at(0).at(1).toString(), keyStorageLabel(KeyStorage::Keyring));
    goodId_ = model.at(0).id;
    QCOMPARE(lookUp(goodId_), key_);
    const QString keyDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/keys";
    QVERIFY(!QFile::exists(keyDir + "/" + goodId_ + ".key"));  // no fallback file
  }

  // After a restart the key comes back from the keyring: the server accepts it; a wrong key,
  // also kept in the keyring, gets the server's 401 and the status never shows it.
  void keyFromTheKeyringReachesTheServer() {
    ConnectionsModel model;
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.at(0).keyStorage, KeyStorage::Keyring);
    QSignalSpy tested(&model, &ConnectionsModel::tested);
    model.test(0);
    QVERIFY(tested.wait(30000));
    QVERIFY2(model.at(0).reachable, qPrintable(model.at(0).status));
    QVERIFY(!model.at(0).models.isEmpty());

    QSignalSpy stored(&model, &ConnectionsModel::keyStored);
    QCOMPARE(model.add("wrong", baseUrl_, wrongKey_), QString());
    QVERIFY(stored.count() == 1 || stored.wait(30000));
    QCOMPARE(model.at(1).keyStorage, KeyStorage::Keyring);
    QCOMPARE(lookUp(model.at(1).id), wrongKey_);
    model.test(1);
    QVERIFY(tested.wait(30000));
    QVERIFY(!model.at(1).reachable);
    QVERIFY2(model.at(1).status.contains("401"), qPrintable(model.at(1).status));
    QVERIFY(!model.at(1).status.contains(wrongKey_));
  }

  // No file the app or the server wrote (nor the keyring's own, encrypted with its password)
  // holds a key, plain or base64.
  void noFileHoldsAKey() {
    const QString settingsFile = QSettings().fileName();
    QVERIFY2(settingsFile.startsWith(home_->path()), qPrintable(settingsFile));
    QFile settings(settingsFile);
    QVERIFY(settings.open(QIODevice::ReadOnly));
    QVERIFY(settings.readAll().contains(baseUrl_.toUtf8()));  // the list is there, the keys not
    const QList<QByteArray> needles = {key_.toUtf8(), key_.toUtf8().toBase64(), wrongKey_.toUtf8(),
                                       wrongKey_.toUtf8().toBase64()};
    QStringList scanned;
    QDirIterator it(home_->path(), QDir::Files | QDir::Hidden | QDir::System | QDir::NoSymLinks,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
      QFile file(it.next());
      if (!file.open(QIODevice::ReadOnly)) continue;  // sockets
      const QByteArray bytes = file.readAll();
      for (const QByteArray& needle : needles)
        QVERIFY2(!bytes.contains(needle), qPrintable(file.fileName() + " holds a key"));
      scanned << QFileInfo(file).fileName();
    }
    for (const char* expected : {"ember.log", "serve.log", "login.keyring"})
      QVERIFY2(scanned.contains(QLatin1String(expected)), qPrintable(scanned.join(' ')));
  }

  // The spdlog output of both sides records the connection tests and the refusal, never a key.
  void logsNeverHoldTheKey() {
    QFile appLog(log::filePath());
    QVERIFY2(appLog.open(QIODevice::ReadOnly), qPrintable(log::filePath()));
    const QByteArray app = appLog.readAll();
    QVERIFY2(app.contains("connection test: ring"), app.constData());
    QVERIFY2(app.contains("connection test: wrong") && app.contains("401"), app.constData());
    QFile serverLog(serveLog());
    QVERIFY(serverLog.open(QIODevice::ReadOnly));
    const QByteArray server = serverLog.readAll() + serve_.readAll();  // file and stderr
    QVERIFY2(server.contains("status=401"), server.constData());
    for (const QByteArray& text : {app, server}) {
      QVERIFY(!text.contains(key_.toUtf8()));
      QVERIFY(!text.contains(wrongKey_.toUtf8()));
    }
  }

  void removingTheServerRemovesTheKey() {
    ConnectionsModel model;
    const int row = model.rowOf(goodId_);
    QVERIFY(row >= 0);
    model.remove(row);
    QVERIFY(QTest::qWaitFor([&] { return lookUp(goodId_).isEmpty(); }, 20000));
  }
};

QTEST_GUILESS_MAIN(TestConnectionKeyring)
#include "test_connection_keyring.moc"
