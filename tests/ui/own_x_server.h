// An Xvfb of a test's own, on a display number the server picks itself (-displayfd), so that
// tests started side by side never race for one; stopped when this goes away.
#pragma once

#include <QProcess>
#include <QStandardPaths>
#include <QString>

namespace ember::test {

class OwnXServer {
 public:
  ~OwnXServer() {
    if (server_.state() == QProcess::NotRunning) return;
    server_.terminate();
    if (!server_.waitForFinished(5000)) server_.kill();
    server_.waitForFinished(5000);
  }
  static bool available() { return !QStandardPaths::findExecutable("Xvfb").isEmpty(); }
  // The display (":N") once the server listens; empty when it did not start.
  QString start() {
    server_.start("Xvfb", {"-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"});
    if (!server_.waitForStarted(5000)) return {};
    QByteArray number;
    while (!number.endsWith('\n') && server_.waitForReadyRead(10000))
      number += server_.readAllStandardOutput();
    number = number.trimmed();
    return number.isEmpty() ? QString() : ":" + QString::fromLatin1(number);
  }

 private:
  QProcess server_;
};

}  // namespace ember::test
