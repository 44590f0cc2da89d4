// makeBackend, the run-time choice of backend, on the tiny llama model of tests/engine/model/data.
// Reference: the documented rules of backend/backend_factory.h: "cpu" always gives the CPU
// backend; "cuda" gives the CUDA backend when cudaUnavailableReason() is empty and otherwise fails
// with an ember::Error that carries that reason; "auto" picks CUDA exactly when it is available;
// anything else fails naming the bad choice and the valid ones. Runs on any machine: without a
// device (or without a CUDA build) the "cuda" rows check the error instead.
#include <QtTest>
#include <algorithm>
#include <memory>

#include "backend/backend_factory.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"

using namespace ember;

class TestBackendFactory : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const QString path = test::sourceDir() + "/tests/engine/model/data/tiny-llama3.gguf";
    file_ = gguf::GgufFile::open(path.toStdString());
    cudaReason_ = cudaUnavailableReason();
    qInfo("CUDA: %s", cudaReason_.empty() ? "available" : cudaReason_.c_str());
  }

  void availableBackendsFollowTheReason() {
    const std::vector<std::string> names = availableBackends();
    QVERIFY(!names.empty());
    QCOMPARE(names.front(), std::string("cpu"));
    const bool listsCuda = std::find(names.begin(), names.end(), "cuda") != names.end();
    QCOMPARE(listsCuda, cudaReason_.empty());
  }

  void choice_data() {
    QTest::addColumn<QString>("choice");
    QTest::addColumn<QString>("expected");  // "cpu", "cuda" or "error: <text in the message>"
    const bool cuda = cudaReason_.empty();
    const QString cudaError = "error: the CUDA backend is not available: " +
                              QString::fromStdString(cudaReason_);
    QTest::newRow("cpu") << "cpu" << "cpu";
    QTest::newRow("auto") << "auto" << (cuda ? "cuda" : "cpu");
    QTest::newRow("cuda") << "cuda" << (cuda ? QString("cuda") : cudaError);
    QTest::newRow("bogus") << "bogus" << "error: unknown backend \"bogus\" (choose auto, cpu or cuda)";
    QTest::newRow("empty") << "" << "error: unknown backend \"\"";
    QTest::newRow("case matters") << "CPU" << "error: unknown backend \"CPU\"";
  }
  void choice() {
    QFETCH(QString, choice);
    QFETCH(QString, expected);
    try {
      std::string fallback;
      const std::unique_ptr<Backend> backend =
          makeBackend(*file_, choice.toStdString(), 1, &fallback);
      // The tiny F32 model is within what both backends support: "auto" never falls back.
      QVERIFY2(fallback.empty(), fallback.c_str());
      QVERIFY2(!expected.startsWith("error: "), qPrintable("no error; expected " + expected));
      const QString name = QString::fromStdString(backend->name());
      QVERIFY2(name.startsWith(expected), qPrintable(name));
      QCOMPARE(backend->vocabSize(), size_t(file_->findTensor("token_embd.weight")->shape[1]));
    } catch (const ember::Error& e) {
      QVERIFY2(expected.startsWith("error: "), e.what());
      QVERIFY2(QString(e.what()).contains(expected.mid(7)), e.what());
    }
  }

 private:
  std::unique_ptr<gguf::GgufFile> file_;
  std::string cudaReason_;
};

QTEST_APPLESS_MAIN(TestBackendFactory)
#include "test_backend_factory.moc"
