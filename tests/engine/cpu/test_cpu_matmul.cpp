// matmul: threading, tiling and scratch handling around the kernels of test_cpu_dot.
//
// References:
// - a naive double-precision product of the dequantized weights (checked against gguf-py in
//   test_cpu_dequantize) with the unquantized activations, within the worst-case error of the
//   activation rounding (|x_hat - x| <= d/2 plus the F16 rounding of d; see test_cpu_dot);
// - bitwise agreement across thread counts and token counts: every output element is computed by
//   the same operations whichever tile or thread it falls in, so any difference is a bug. The
//   operations depend on the token count only where llama.cpp's do (repacked Q4_K, tiled
//   K-quants; see quant/kernels.h): token t of an n-token product must equal the kernel that
//   order assigns it, run on token t alone;
// - real matrices of the two real models (when present), against the same double reference.
#include <QtTest>
#include <cmath>

#include "backend/cpu/matmul.h"
#include "backend/cpu/thread_pool.h"
#include "ember/error.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"
#include "gguf/gguf_file.h"

using namespace ember;
using cpu::SimdLevel;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)
Q_DECLARE_METATYPE(SimdLevel)

namespace {

const char* typeName(GgmlType t) { return gguf::ggmlTypeName(t).data(); }

// Largest rounding error of an activation element for the type's activation format.
double activationStep(GgmlType type, const float* block, int64_t count, float value) {
  const uint32_t blockSize = test::blockSizeOf(type);
  if (blockSize == 1) {
    if (type == GgmlType::F32) return 0.0;
    return (type == GgmlType::F16 ? 0x1p-11 : 0x1p-8) * std::fabs(value) + 0x1p-25;
  }
  double amax = 0;
  for (int64_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(double(block[i])));
  const double d = amax / 127.0;
  return (blockSize == 32 ? d * (0.5 + 127.0 * 0x1p-11) : d * 0.5) * (1 + 1e-6);
}

// Checks y (n x rows) against the double reference; returns the largest error / bound.
double checkAgainstReference(const cpu::WeightMatrix& w, const std::vector<float>& x, int64_t n,
                             const std::vector<float>& y, int64_t rowLimit = -1) {
  const int64_t cols = w.cols;
  const int64_t rows = rowLimit > 0 ? rowLimit : w.rows;
  const int64_t block = std::max<int64_t>(test::blockSizeOf(w.type), 32);
  std::vector<double> step(static_cast<size_t>(n * cols));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < cols; ++i) {
      const float* row = x.data() + t * cols;
      const int64_t b = i / block * block;
      step[size_t(t * cols + i)] =
          activationStep(w.type, row + b, std::min(block, cols - b), row[i]);
    }
  const bool hasMin = w.type == GgmlType::Q4_1 || w.type == GgmlType::Q5_1;
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<double> wr = test::dequantizedRow(w, r);
    for (int64_t t = 0; t < n; ++t) {
      double exact = 0, magnitude = 0, bound = 0;
      for (int64_t i = 0; i < cols; ++i) {
        const double xi = x[size_t(t * cols + i)];
        exact += wr[size_t(i)] * xi;
        magnitude += std::fabs(wr[size_t(i)] * xi);
        bound += std::fabs(wr[size_t(i)]) * step[size_t(t * cols + i)];
        if (hasMin && i % 32 == 0) {  // ggml's Q8_1 s = F16(d * sum(q)): |m| * |s| * 2^-11
          const uint8_t* blk =
              w.data + r * w.rowBytes + (i / 32) * (w.type == GgmlType::Q4_1 ? 20 : 24);
          const double m = std::fabs(cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk + 2)));
          for (int64_t j = i; j < i + 32; ++j)
            bound +=
                m * (std::fabs(x[size_t(t * cols + j)]) + step[size_t(t * cols + j)]) * 0x1p-11;
        }
      }
      bound += 2e-5 * magnitude + 1e-30;  // float summation
      const double err = std::fabs(double(y[size_t(t * w.rows + r)]) - exact);
      worst = std::max(worst, err / bound);
      if (err > bound) {
        qWarning("row %lld token %lld: %.9g vs reference %.9g (bound %.3g)", (long long)r,
                 (long long)t, double(y[size_t(t * w.rows + r)]), exact, bound);
        return worst;
      }
    }
  }
  return worst;
}

// The kernel that llama.cpp's order assigns to token t of an n-token product (kernels.h).
cpu::quant::DotFn kernelForToken(const cpu::quant::TypeKernels& k, const cpu::WeightMatrix& w,
                                 int64_t n, int64_t t) {
  if (k.dotRepackedGroups && w.rows % cpu::quant::kRepackRowMultiple == 0)
    return t < cpu::quant::repackedGroupTokens(n) ? k.dotRepackedGroups : k.dotRepackedSingles;
  if (k.dotTiled && n >= cpu::quant::kTiledMinTokens) return k.dotTiled;
  return k.dot;
}

// Token t alone through `dot` (prepared with the type's own preparation).
std::vector<float> runKernelOnToken(const cpu::quant::TypeKernels& k, cpu::quant::DotFn dot,
                                    const cpu::WeightMatrix& w, const std::vector<float>& x,
                                    int64_t t) {
  const size_t stride = cpu::quant::activationRowBytes(k.format, w.cols);
  test::AlignedBytes xq(stride);
  k.prepare(x.data() + t * w.cols, w.cols, xq.data);
  std::vector<float> y(size_t(w.rows), -7.0f);
  dot({w.data, w.rowBytes, w.rows, xq.data, stride, 1, w.cols, y.data(), w.rows});
  return y;
}

std::vector<float> runMatmul(cpu::ThreadPool& pool, const cpu::WeightMatrix& w,
                             const std::vector<float>& x, int64_t n,
                             cpu::MatmulScratch* scratch = nullptr) {
  cpu::MatmulScratch local;
  std::vector<float> y(static_cast<size_t>(n * w.rows), -7.0f);
  cpu::matmul(pool, w, x.data(), n, y.data(), scratch ? *scratch : local);
  return y;
}

}  // namespace

class TestCpuMatmul : public QObject {
  Q_OBJECT

 private slots:
  void matchesReference_data() {
    QTest::addColumn<GgmlType>("type");
    QTest::addColumn<SimdLevel>("level");
    for (GgmlType type : test::supportedTypes())
      for (SimdLevel level : test::supportedLevels())
        QTest::addRow("%s %s", typeName(type), cpu::simdLevelName(level)) << type << level;
  }

  // n in {1, 2, 7, 19} tokens, 1, 2 and 3 threads, 134 rows (not a multiple of the 4-row tile,
  // and enough for several chunks per thread) and 136 (a multiple of 8: repacked in llama.cpp).
  void matchesReference() {
    QFETCH(GgmlType, type);
    QFETCH(SimdLevel, level);
    const test::SimdLevelGuard guard(level);
    const int64_t cols = test::blockSizeOf(type) == 256  ? 512
                         : test::blockSizeOf(type) == 32 ? 288
                                                         : 71;
    const auto* k = cpu::quant::kernelsFor(type, level);
    QVERIFY(k);
    for (int64_t rows : {134, 136}) {
      const auto w = test::randomMatrix(type, rows, cols, 11);
      const std::vector<float> x = test::randomActivations(19 * cols, 5);
      for (int threads : {1, 2, 3}) {
        cpu::ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        for (int64_t n : {1, 2, 7, 19}) {
          const std::vector<float> y = runMatmul(pool, w.view, x, n);
          QVERIFY(checkAgainstReference(w.view, x, n, y) <= 1.0);
          for (int64_t t = 0; t < n; ++t) {
            const std::vector<float> alone =
                runKernelOnToken(*k, kernelForToken(*k, w.view, n, t), w.view, x, t);
            QVERIFY2(
                std::memcmp(y.data() + t * rows, alone.data(), alone.size() * sizeof(float)) == 0,
                qPrintable(QString("%1 rows, %2 threads, %3 tokens: token %4 differs from "
                                   "its kernel run on it alone")
                               .arg(rows)
                               .arg(threads)
                               .arg(n)
                               .arg(t)));
          }
        }
      }
    }
  }

  void scratchDoesNotGrowOnReuse() {
    cpu::ThreadPool pool(2);
    for (GgmlType type : {GgmlType::Q4_1, GgmlType::Q6_K, GgmlType::F16}) {
      const int64_t cols = test::blockSizeOf(type) == 256 ? 512 : 96;
      const auto w = test::randomMatrix(type, 40, cols, 2);
      const std::vector<float> x = test::randomActivations(7 * cols, 3);
      cpu::MatmulScratch scratch;
      runMatmul(pool, w.view, x, 7, &scratch);
      const size_t size = scratch.quantizedX.size(), capacity = scratch.quantizedX.capacity();
      const uint8_t* data = scratch.quantizedX.data();
      QVERIFY(size > 0);
      for (int64_t n : {7, 1, 3}) runMatmul(pool, w.view, x, n, &scratch);
      QCOMPARE(scratch.quantizedX.size(), size);
      QCOMPARE(scratch.quantizedX.capacity(), capacity);
      QCOMPARE(scratch.quantizedX.data(), data);
    }
  }

  // matmulShared equals separate matmul calls bit for bit, for matrices that share the
  // activation preparation (Q5_0 + Q8_0 + Q4_1: Q8x32) and for ones that do not (+ F16, F32).
  void sharedEqualsSeparate() {
    const int64_t cols = 320;
    const std::vector<GgmlType> types = {GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::F16,
                                         GgmlType::Q4_1, GgmlType::F32};
    std::vector<test::OwnedMatrix> matrices;
    for (size_t i = 0; i < types.size(); ++i)
      matrices.push_back(test::randomMatrix(types[i], 37 + 24 * int64_t(i), cols, uint32_t(i)));
    for (SimdLevel level : test::supportedLevels()) {
      const test::SimdLevelGuard guard(level);
      for (int threads : {1, 3}) {
        cpu::ThreadPool pool(threads);
        for (int64_t n : {1, 6}) {
          const std::vector<float> x = test::randomActivations(n * cols, 21);
          std::vector<std::vector<float>> outputs;
          std::vector<cpu::MatmulTarget> targets;
          for (const auto& m : matrices) outputs.emplace_back(size_t(n * m.view.rows), -3.0f);
          for (size_t i = 0; i < matrices.size(); ++i)
            targets.push_back({&matrices[i].view, outputs[i].data()});
          cpu::MatmulScratch scratch;
          cpu::matmulShared(pool, targets, x.data(), n, scratch);
          for (size_t i = 0; i < matrices.size(); ++i)
            QVERIFY2(outputs[i] == runMatmul(pool, matrices[i].view, x, n),
                     qPrintable(QString("%1, %2 threads, n=%3, matrix %4")
                                    .arg(cpu::simdLevelName(level))
                                    .arg(threads)
                                    .arg(n)
                                    .arg(i)));
        }
      }
    }
    cpu::ThreadPool pool(1);
    const auto narrow = test::randomMatrix(GgmlType::Q8_0, 4, 64, 1);
    std::vector<float> x(cols), y1(100), y2(4);
    const cpu::MatmulTarget mismatched[] = {{&matrices[0].view, y1.data()},
                                            {&narrow.view, y2.data()}};
    cpu::MatmulScratch scratch;
    QVERIFY_THROWS_EXCEPTION(Error, cpu::matmulShared(pool, mismatched, x.data(), 1, scratch));
  }

  // y may alias x: the activations are consumed into the scratch before y is written.
  void outputMayAliasInput() {
    cpu::ThreadPool pool(2);
    for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::F32}) {
      const int64_t cols = 256, rows = 300;
      const auto w = test::randomMatrix(type, rows, cols, 4);
      for (int64_t n : {1, 5}) {
        const std::vector<float> x = test::randomActivations(n * cols, 8);
        const std::vector<float> expected = runMatmul(pool, w.view, x, n);
        std::vector<float> buffer(static_cast<size_t>(n * rows));
        std::copy(x.begin(), x.end(), buffer.begin());
        cpu::MatmulScratch scratch;
        cpu::matmul(pool, w.view, buffer.data(), n, buffer.data(), scratch);
        QVERIFY(buffer == expected);
      }
    }
  }

  void zeroTokensDoesNothing() {
    cpu::ThreadPool pool(2);
    const auto w = test::randomMatrix(GgmlType::Q8_0, 4, 32, 1);
    float y = 5.0f;
    cpu::MatmulScratch scratch;
    cpu::matmul(pool, w.view, nullptr, 0, &y, scratch);
    QCOMPARE(y, 5.0f);
    QCOMPARE(scratch.quantizedX.size(), size_t(0));
  }

  void rejectsEmptyMatrix() {
    cpu::ThreadPool pool(1);
    cpu::WeightMatrix w;
    float x = 1, y = 0;
    cpu::MatmulScratch scratch;
    QVERIFY_THROWS_EXCEPTION(Error, cpu::matmul(pool, w, &x, 1, &y, scratch));
  }

  void simdLevels() {
    QVERIFY(cpu::simdLevelSupported(SimdLevel::Scalar));
    QCOMPARE(QString(cpu::simdLevelName()), QString(cpu::simdLevelName(cpu::detectedSimdLevel())));
    qInfo("SIMD level: %s", cpu::simdLevelName());
    if (!cpu::simdLevelSupported(SimdLevel::Avx512Vnni))
      QVERIFY_THROWS_EXCEPTION(Error, cpu::setSimdLevelForTesting(SimdLevel::Avx512Vnni));
  }

  void realMatrices_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<int>("rowLimit");
    const QString smol = "SmolLM2-135M-Instruct.Q4_1.gguf", gemma = "gemma-3-270m-q4_k_m.gguf";
    QTest::newRow("SmolLM2 ffn_down Q4_1") << smol << "blk.0.ffn_down.weight" << 0;
    QTest::newRow("SmolLM2 attn_q Q4_1") << smol << "blk.3.attn_q.weight" << 0;
    QTest::newRow("SmolLM2 token_embd Q8_0") << smol << "token_embd.weight" << 2000;
    QTest::newRow("Gemma attn_q Q5_0") << gemma << "blk.0.attn_q.weight" << 0;
    QTest::newRow("Gemma attn_output Q4_K") << gemma << "blk.0.attn_output.weight" << 0;
    QTest::newRow("Gemma ffn_down Q6_K") << gemma << "blk.0.ffn_down.weight" << 0;
    QTest::newRow("Gemma attn_v Q8_0") << gemma << "blk.0.attn_v.weight" << 0;
  }

  // Real weights (every type of both real models), 1 and 3 tokens, each SIMD level. Large
  // matrices are checked on their first rowLimit rows (all rows are computed).
  void realMatrices() {
    QFETCH(QString, model);
    QFETCH(QString, tensor);
    QFETCH(int, rowLimit);
    EMBER_REQUIRE_MODEL(path, model);
    const auto file = gguf::GgufFile::open(path.toStdString());
    const gguf::TensorInfo* info = file->findTensor(tensor.toStdString());
    QVERIFY(info);
    const cpu::WeightMatrix w = cpu::weightMatrix(*info);
    const std::vector<float> x = test::randomActivations(3 * w.cols, 9);
    cpu::ThreadPool pool(2);
    for (SimdLevel level : test::supportedLevels()) {
      const test::SimdLevelGuard guard(level);
      for (int64_t n : {1, 3}) {
        const std::vector<float> y = runMatmul(pool, w, x, n);
        const double worst = checkAgainstReference(w, x, n, y, rowLimit);
        QVERIFY2(worst <= 1.0, cpu::simdLevelName(level));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuMatmul)
#include "test_cpu_matmul.moc"
