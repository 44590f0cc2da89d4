// The CUDA backend as a module opened on demand (backend/cuda_module.h). References: the
// documented rules of cuda_module.h and backend_factory.h, and the kernel's own record of what a
// process has mapped (/proc/self/maps):
// - a CPU backend and a CPU engine leave the CUDA runtime and cuBLAS unmapped, in a build with
//   the CUDA backend too (before the module, every such process mapped them at start);
// - a module file that is missing, is not a shared object, lacks the entry point, or belongs to
//   another interface or build gives a reason naming the file and what is wrong, never a crash;
//   this build's interface is accepted (fake modules built by tests/CMakeLists.txt);
// - with $EMBER_CUDA_MODULE pointing at a missing file, "auto" gives the CPU backend, "cuda"
//   fails with that reason, availableBackends() lists cpu alone, and the engine's backend string
//   says why CUDA was not used.
// Runs on any machine, in well under a second (the SmolLM2 row skips without the model).
#include <QtTest>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "backend/backend_factory.h"
#include "backend/cuda/cuda_module_abi.h"
#include "backend/cuda_module.h"
#include "common/test_paths.h"
#include "ember/devices.h"
#include "ember/engine.h"
#include "gguf/gguf_file.h"

using namespace ember;

namespace {

// The lines of /proc/self/maps that name a CUDA runtime or cuBLAS file.
std::string cudaLibraryMappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line, found;
  while (std::getline(maps, line)) {
    if (line.find("libcudart") != std::string::npos || line.find("libcublas") != std::string::npos)
      found += line + "\n";
  }
  return found;
}

std::string executableFolder() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  std::string path(buffer, n > 0 ? size_t(n) : 0);
  return path.substr(0, path.rfind('/'));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class TestCudaModule : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // Inside the build folder, never created: what cudaModule() finds for the whole process.
    missingModule_ = executableFolder() + "/fake-cuda-modules/missing/libember_cuda.so";
    setenv("EMBER_CUDA_MODULE", missingModule_.c_str(), 1);
    tiny_ = test::sourceDir().toStdString() + "/tests/engine/model/data/tiny-llama3.gguf";
  }

  // First: nothing before it may have asked for a CUDA device.
  void cpuBackendMapsNoCudaLibrary() {
    QCOMPARE(cudaLibraryMappings(), std::string());  // at start (the engine links no CUDA)
    const auto file = gguf::GgufFile::open(tiny_);
    const std::unique_ptr<Backend> backend = makeBackend(*file, "cpu", 1);
    QVERIFY(backend->name().starts_with("cpu"));
    QCOMPARE(cudaLibraryMappings(), std::string());
  }

  void moduleFilesThatCannotServe_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");  // in the reason
    const QString dir = QString::fromStdString(executableFolder()) + "/fake-cuda-modules/";
    QTest::newRow("missing") << dir + "missing/libember_cuda.so" << "is not installed";
    QTest::newRow("not a shared object") << dir + "garbage/libember_cuda.so"
                                         << "cannot be loaded: ";
    QTest::newRow("no entry point") << dir + "libfake_cuda_module_no_entry.so"
                                    << "is not an Ember CUDA backend module";
    QTest::newRow("other interface") << dir + "libfake_cuda_module_other_abi.so"
                                     << "has interface version";
    QTest::newRow("other build") << dir + "libfake_cuda_module_other_build.so"
                                 << "(interface 0000000000000000), this is Ember";
  }
  void moduleFilesThatCannotServe() {
    QFETCH(QString, path);
    QFETCH(QString, expected);
    if (path.contains("/garbage/")) {  // a file that is not ELF, written here
      QVERIFY(QDir().mkpath(QFileInfo(path).path()));
      std::ofstream(path.toStdString()) << "this is not a shared object\n";
    }
    const CudaModuleStatus status = openCudaModule(path.toStdString());
    QVERIFY(status.table == nullptr);
    QVERIFY2(status.reason.find(expected.toStdString()) != std::string::npos,
             status.reason.c_str());
    if (!path.contains("/garbage/")) {
      QVERIFY2(contains(status.reason, path.toStdString()), status.reason.c_str());
    }
    QCOMPARE(cudaLibraryMappings(), std::string());
  }

  void moduleOfThisBuildIsAccepted() {
    const std::string path =
        executableFolder() + "/fake-cuda-modules/libfake_cuda_module_good.so";
    const CudaModuleStatus status = openCudaModule(path);
    QVERIFY2(status.table != nullptr, status.reason.c_str());
    QCOMPARE(status.table->abiVersion, cuda::kCudaModuleAbiVersion);
    std::string reason;
    QCOMPARE(status.table->deviceCount(&reason), 0);
    QCOMPARE(reason, std::string("fake module: no device"));
  }

  void missingModuleGivesTheCpuBackendWithTheReason() {
    const std::string reason = cudaUnavailableReason();
#if EMBER_WITH_CUDA
    QVERIFY2(contains(reason, "the CUDA backend module " + missingModule_ + " is not installed"),
             reason.c_str());
#else
    QCOMPARE(reason, std::string("this build of Ember has no CUDA support (it was built without nvcc)"));
#endif
    QCOMPARE(availableBackends(), std::vector<std::string>{"cpu"});
    const auto file = gguf::GgufFile::open(tiny_);
    std::string fallback;
    const std::unique_ptr<Backend> automatic = makeBackend(*file, "auto", 1, &fallback);
    QVERIFY(automatic->name().starts_with("cpu"));
    try {
      (void)makeBackend(*file, "cuda", 1);
      QFAIL("the cuda choice loaded without a module");
    } catch (const ember::Error& e) {
      QCOMPARE(std::string(e.what()), "the CUDA backend is not available: " + reason);
    }
    QVERIFY(!deviceFreeMemory("cuda").has_value());
    QCOMPARE(deviceFreeMemory("auto")->where, std::string("system RAM"));
    QCOMPARE(cudaLibraryMappings(), std::string());
  }

  void engineBackendStringSaysWhyCudaIsNotUsed() {
    EMBER_REQUIRE_MODEL(model, "SmolLM2-135M-Instruct.Q4_1.gguf");
    EngineOptions options;
    options.modelPath = model.toStdString();
    options.backend = "auto";
    options.contextLength = 256;
    options.threads = 1;
    const std::unique_ptr<Engine> engine = Engine::load(options);
    const std::string name = engine->info().backendName;
    QVERIFY2(name.starts_with("cpu ("), name.c_str());
#if EMBER_WITH_CUDA
    QVERIFY2(contains(name, "; CUDA not used: " + cudaUnavailableReason()), name.c_str());
#endif
    options.backend = "cpu";  // asked for: nothing to explain
    QVERIFY(!contains(Engine::load(options)->info().backendName, "CUDA"));
    QCOMPARE(cudaLibraryMappings(), std::string());
  }

  // Last: it maps the CUDA runtime. This build's real module loads (every symbol resolved, the
  // entry found, the build accepted) and answers without a device or driver.
  void realModuleLoadsAndAnswers() {
#if EMBER_WITH_CUDA
    const std::string path = executableFolder() + "/../lib/ember/" + cuda::kCudaModuleFileName;
    const CudaModuleStatus status = openCudaModule(path);
    QVERIFY2(status.table != nullptr, status.reason.c_str());
    std::string reason;
    const int count = status.table->deviceCount(&reason);
    qInfo("the module sees %d device(s)%s%s", count, reason.empty() ? "" : ": ", reason.c_str());
    QVERIFY(count > 0 ? reason.empty() : !reason.empty());
    QVERIFY(!cudaLibraryMappings().empty());  // what the other rows checked was absent
#else
    QSKIP("this build has no CUDA backend, so no module");
#endif
  }

 private:
  std::string missingModule_;
  std::string tiny_;
};

QTEST_APPLESS_MAIN(TestCudaModule)
#include "test_cuda_module.moc"
