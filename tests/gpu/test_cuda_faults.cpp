// GPU faults through the CUDA backend's checked-call layer (its fault switch, compiled only into
// builds with the tests): an allocation failure and a CUDA error.
// Without a device (runs everywhere the CUDA build exists): the switch itself, on the real
// checked calls: the nth matching call reports the injected error with the layer's message, other
// calls and later ones are untouched, and a device allocation fails before it allocates (the
// message is the injected "out of memory", not the "no CUDA-capable device" the real call gives).
// With a device (skipped with the reason without one): on SmolLM2, a CUDA error in a decode step
// fails that request with the message, the engine (the host) lives, every KV block comes back,
// and the same request then gives the same greedy answer as before the fault; an allocation
// failure at load is a clear error and the next load works.
// References: cudaGetErrorString of the injected codes (the runtime's own text), the layer's
// documented message format (cuda_check.h), and the engine's answer without a fault.
#include <QtTest>
#include <string>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/cuda_module_abi.h"
#include "backend/cuda_module.h"
#include "common/test_paths.h"
#include "ember/engine.h"
#include "kernels/kernel_test_support.h"

using namespace ember;
namespace ct = ember::cuda::testing;

namespace {

const char* kSmol = "SmolLM2-135M-Instruct.Q4_1.gguf";

template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no error>";
}

struct Answer {
  std::string text;
  RequestStats stats;
};

Answer run(Engine& engine, const std::string& question) {
  GenerationRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", question}}});
  r.sampling.temperature = 0;
  r.sampling.maxTokens = 8;
  Answer answer;
  engine.addRequest(std::move(r), [&answer](const RequestEvent& e) {
    if (e.kind == RequestEvent::Kind::Text) answer.text += e.text;
    else if (e.kind == RequestEvent::Kind::Finished) answer.stats = *e.stats;
  });
  while (engine.hasWork()) engine.step();
  return answer;
}

}  // namespace

class CudaFaultsTest : public QObject {
  Q_OBJECT

 private slots:
  // The engine's loads go to this test's own copy of the backend, whose fault switch it arms
  // (not to libember_cuda.so, which has a switch of its own).
  void initTestCase() { useLinkedCudaModule(cuda::linkedCudaModuleTable()); }
  void cleanup() { ct::disarmFault(); }

  void checkedCallReportsTheInjectedError() {
    const cuda::CudaSite site{"forward", 3};
    ct::armFault("cudaStreamSynchronize", cudaErrorLaunchFailure, 2);
    cuda::checkCuda(cudaSuccess, site, "cudaStreamSynchronize");  // the first: untouched
    cuda::checkCuda(cudaSuccess, site, "cudaMemcpyAsync");        // another call: not counted
    QCOMPARE(ct::callsSinceArmed(), 1L);
    const std::string error =
        errorOf([&] { cuda::checkCuda(cudaSuccess, site, "cudaStreamSynchronize"); });
    QCOMPARE(error, std::string("CUDA error in forward (layer 3, cudaStreamSynchronize): ") +
                        cudaGetErrorString(cudaErrorLaunchFailure));
    QCOMPARE(ct::faultsInjected(), 1L);
    // Once only: the next call runs as usual.
    cuda::checkCuda(cudaSuccess, site, "cudaStreamSynchronize");
    QCOMPARE(ct::faultsInjected(), 1L);
    // A real error still wins when nothing is armed.
    QVERIFY(errorOf([&] {
              cuda::checkCuda(cudaErrorInvalidValue, site, "cudaMemcpyAsync");
            }).find(cudaGetErrorString(cudaErrorInvalidValue)) != std::string::npos);
  }

  void allocationFailsBeforeAllocating() {
    ct::armFault("cudaMalloc", cudaErrorMemoryAllocation, 1);
    const std::string error = errorOf([] {
      cuda::DeviceMemory memory(size_t(64) << 20, cuda::CudaSite{"allocateKvCache", -1},
                                "the KV cache");
    });
    QCOMPARE(ct::faultsInjected(), 1L);
    QVERIFY2(error.rfind("CUDA error in allocateKvCache (cudaMalloc ", 0) == 0, error.c_str());
    QVERIFY2(error.find("for the KV cache): ") != std::string::npos, error.c_str());
    QVERIFY2(error.find(cudaGetErrorString(cudaErrorMemoryAllocation)) != std::string::npos,
             error.c_str());
  }

  void cudaErrorFailsTheRequestAndTheHostLives() {
    EMBER_REQUIRE_CUDA_DEVICE();
    EMBER_REQUIRE_MODEL(model, kSmol);
    EngineOptions options;
    options.modelPath = model.toStdString();
    options.backend = "cuda";
    options.contextLength = 512;
    options.maxSequences = 2;
    std::unique_ptr<Engine> engine = Engine::load(options);
    const int32_t freeBefore = engine->freeKvBlocks();
    const Answer reference = run(*engine, "Name one color.");
    QCOMPARE(reference.stats.finishReason, FinishReason::Length);
    QCOMPARE(engine->freeKvBlocks(), freeBefore);

    // The third synchronisation: the prompt's step, then decode steps; one of those fails.
    ct::armFault("cudaStreamSynchronize", cudaErrorLaunchFailure, 3);
    const Answer failed = run(*engine, "Name one color.");
    QCOMPARE(ct::faultsInjected(), 1L);
    QCOMPARE(failed.stats.finishReason, FinishReason::Error);
    QVERIFY2(failed.stats.error.find("CUDA error in ") != std::string::npos,
             failed.stats.error.c_str());
    QVERIFY2(failed.stats.error.find(cudaGetErrorString(cudaErrorLaunchFailure)) !=
                 std::string::npos,
             failed.stats.error.c_str());
    QCOMPARE(engine->freeKvBlocks(), freeBefore);  // the pool is whole again
    QVERIFY(!engine->hasWork());

    const Answer again = run(*engine, "Name one color.");
    QCOMPARE(again.stats.finishReason, FinishReason::Length);
    QCOMPARE(again.text, reference.text);
  }

  void allocationFailureAtLoadIsAClearError() {
    EMBER_REQUIRE_CUDA_DEVICE();
    EMBER_REQUIRE_MODEL(model, kSmol);
    EngineOptions options;
    options.modelPath = model.toStdString();
    options.backend = "cuda";
    options.contextLength = 512;
    ct::armFault("cudaMalloc", cudaErrorMemoryAllocation, 2);
    const std::string error = errorOf([&] { (void)Engine::load(options); });
    QCOMPARE(ct::faultsInjected(), 1L);
    QVERIFY2(error.find("cudaMalloc") != std::string::npos, error.c_str());
    QVERIFY2(error.find(cudaGetErrorString(cudaErrorMemoryAllocation)) != std::string::npos,
             error.c_str());
    ct::disarmFault();
    std::unique_ptr<Engine> engine = Engine::load(options);
    QCOMPARE(run(*engine, "Name one color.").stats.finishReason, FinishReason::Length);
  }
};

QTEST_GUILESS_MAIN(CudaFaultsTest)
#include "test_cuda_faults.moc"
