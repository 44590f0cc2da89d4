#pragma once
// llama.cpp's OpenAI-compatible server (llama-cpp-python's `llama_cpp.server`, from the venv that
// scripts/setup-llamacpp-venv.sh builds) on a loopback port the test picks. It dies with the test
// (PR_SET_PDEATHSIG) and is killed when the object goes away.
#include <QProcess>
#include <QtTest>

#include <signal.h>
#include <sys/prctl.h>

#include "common/test_paths.h"
#include "remote_test_support.h"

namespace ember::test {

inline QString llamacppVenvPython(QString* why) {
  QString venv = qEnvironmentVariable("EMBER_LLAMACPP_PEER_VENV");
  if (venv.isEmpty()) venv = QDir::homePath() + "/.cache/ember/venv-llamacpp-peer";
  const QString python = venv + "/bin/python";
  QByteArray out;
  if (runProcess(python, {"-c", "import llama_cpp.server.app, openai"}, &out, nullptr, {},
                 60000) != 0) {
    *why = "no llama-cpp-python[server] venv at " + venv +
           " (scripts/setup-llamacpp-venv.sh builds it; EMBER_LLAMACPP_PEER_VENV points elsewhere)";
    return {};
  }
  return python;
}

class LlamacppPeer {
 public:
  static constexpr const char* kAlias = "smollm2-peer";

  bool start(const QString& python, const QString& model, const QString& apiKey, QString* why) {
    port_ = freePort();
    process_.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
    process_.setProcessChannelMode(QProcess::MergedChannels);
    process_.start(python, {"-m", "llama_cpp.server", "--model", model, "--model_alias", kAlias,
                            "--host", "127.0.0.1", "--port", QString::number(port_), "--n_ctx",
                            "2048", "--n_threads", "2", "--api_key", apiKey});
    if (!waitForPort(process_, port_, 90000)) {
      *why = "llama_cpp.server did not start: " + QString::fromUtf8(process_.readAll().right(2000));
      return false;
    }
    return true;
  }
  // Why the server is gone, or "" while it runs (a build for the wrong CPU dies with SIGILL at
  // its first answer).
  QString death() {
    if (process_.state() != QProcess::NotRunning) return {};
    return QString("llama_cpp.server exited (%1 %2): %3")
        .arg(process_.exitStatus() == QProcess::CrashExit ? "signal" : "status")
        .arg(process_.exitCode())
        .arg(QString::fromUtf8(process_.readAll().right(600)));
  }
  void kill() {
    if (process_.state() != QProcess::NotRunning) {
      process_.kill();
      process_.waitForFinished(5000);
    }
  }
  // From any thread (a test's event sink): SIGKILL now, reaped later by kill().
  void killNow() {
    if (const qint64 pid = process_.processId(); pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
  ~LlamacppPeer() { kill(); }
  std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  QProcess process_;
  int port_ = 0;
};

}  // namespace ember::test
