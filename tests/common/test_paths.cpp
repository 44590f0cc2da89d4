#include "common/test_paths.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>

namespace ember::test {

QString testdataDir() {
  const QString env = qEnvironmentVariable("EMBER_TESTDATA");
  return QDir::cleanPath(env.isEmpty() ? QStringLiteral(EMBER_DEFAULT_TESTDATA) : env);
}

QString modelsDir() {
  const QString env = qEnvironmentVariable("EMBER_MODELS_DIR");
  if (!env.isEmpty()) return QDir::cleanPath(env);
  return QDir::homePath() + QStringLiteral("/.cache/ember/models");
}

QString sourceDir() { return QStringLiteral(EMBER_SOURCE_DIR); }

QString builtProgram(const char* name) {
  const QString self = QFileInfo(QStringLiteral("/proc/self/exe")).canonicalFilePath();
  return QFileInfo(self).absolutePath() + QLatin1Char('/') + QLatin1String(name);
}

bool underCi() { return qEnvironmentVariable("CI") == QLatin1String("true"); }

QString findTestdata(const QString& relative, QString* why) {
  const QString path = testdataDir() + QLatin1Char('/') + relative;
  if (QFileInfo::exists(path)) return path;
  *why = QStringLiteral("reference data %1 not found; set EMBER_TESTDATA to the shared testdata "
                        "folder (now %2)")
             .arg(relative, testdataDir());
  return {};
}

QString findModel(const QString& fileName, QString* why) {
  const QString path = modelsDir() + QLatin1Char('/') + fileName;
  if (QFileInfo::exists(path)) return path;
  *why = QStringLiteral("model %1 not found in %2; run scripts/fetch-models.sh or set "
                        "EMBER_MODELS_DIR")
             .arg(fileName, modelsDir());
  return {};
}

int runProcess(const QString& program, const QStringList& args, QByteArray* out, QByteArray* err,
               const QByteArray& stdinData, int timeoutMs) {
  QProcess p;
  p.start(program, args);
  if (!p.waitForStarted(10000)) return -1;
  if (!stdinData.isEmpty()) p.write(stdinData);
  p.closeWriteChannel();
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return -1;
  }
  if (out) *out = p.readAllStandardOutput();
  if (err) *err = p.readAllStandardError();
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

}  // namespace ember::test
