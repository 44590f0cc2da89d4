#pragma once
// Where tests find reference data and models, and what they do when it is missing: under CI
// (CI=true) a missing reference fails loudly; elsewhere the test is reported as not run, naming
// the variable to set. A test never passes silently without its reference.
#include <QString>
#include <QtTest>

namespace ember::test {

QString testdataDir();  // $EMBER_TESTDATA or ../shared/testdata next to the source tree
QString modelsDir();    // $EMBER_MODELS_DIR or ~/.cache/ember/models
QString sourceDir();    // the repository root
// A program of this build (ember-cli, ember, ember-serve): it lies beside the test's own
// executable. Found at run time rather than compiled in, so that a test's object file does not
// depend on where the tree was cloned and ccache can reuse it across clones.
QString builtProgram(const char* name);
bool underCi();

// Returns the absolute path, or an empty string with `why` filled in when it does not exist.
QString findTestdata(const QString& relative, QString* why);
QString findModel(const QString& fileName, QString* why);

// Runs a program to completion; returns its exit code (-1 when it could not start), stdout and
// stderr as bytes. Used to compare against the CLI and against Python references.
int runProcess(const QString& program, const QStringList& args, QByteArray* out,
               QByteArray* err = nullptr, const QByteArray& stdinData = {}, int timeoutMs = 120000);

}  // namespace ember::test

// Use inside a test function: resolves `var` to the path of a testdata file or model, or fails
// (CI) / skips (elsewhere) with the reason.
#define EMBER_REQUIRE_PATH(var, finder, name)                                   \
  QString var;                                                                  \
  do {                                                                          \
    QString why_;                                                               \
    var = ember::test::finder(name, &why_);                                     \
    if (var.isEmpty()) {                                                        \
      if (ember::test::underCi()) QFAIL(qPrintable(why_));                      \
      QSKIP(qPrintable(why_));                                                  \
    }                                                                           \
  } while (0)
#define EMBER_REQUIRE_TESTDATA(var, rel) EMBER_REQUIRE_PATH(var, findTestdata, rel)
#define EMBER_REQUIRE_MODEL(var, file) EMBER_REQUIRE_PATH(var, findModel, file)
