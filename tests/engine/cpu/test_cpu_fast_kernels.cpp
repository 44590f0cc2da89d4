// The fast kernels: weights repacked at load (backend/cpu/repack.h) and the kernels on them.
//
// References and bounds:
// - repacking: the repacked weights, read through the layout repack.h documents, against the
//   source's scalar dequantization (checked against gguf-py in test_cpu_dequantize). Q4_0,
//   Q4_1, Q5_0, Q5_1 and Q8_0 must be bit-equal (d * q + m with the source's f16 d and m, or
//   m = -8d, which is exact). K-quants: the f16 rounding of each sub-block's d * scale and
//   dmin * min costs at most 2^-11 of each, so |w' - w| <= 2^-11 (|d'| |q| + |m'|) (1 + 2^-10).
//   Q6_K is requantized to 8 bits per 32 values: |w' - w| <= d'/2 + 2^-11 amax (the f16 d' may
//   sit just below amax / 127, clipping the largest value by that much).
// - kernels: every SIMD level against the scalar kernel, bit for bit (integer sums are exact
//   and the float steps per block and token are the same fused multiply-adds at every level).
// - products: the fast matmul against a double-precision product of the source weights and the
//   unquantized activations. Activation rounding: q = round(x * 127 / amax), d = f16(amax / 127),
//   so |x' - x| <= amax (1/254 + 2^-11) per element (1e-5 relative slack for the float product
//   x * (127 / amax)); with the weight bound e_w above,
//     |y' - y| <= sum_j |w_j| e_x + |x_j| e_w + e_x e_w  +  4 (nb + 2) 2^-24 sum_j |w'_j x'_j|
//   (the last term: two float roundings per block of 32 and the f16 scale products); Q4_1 and
//   Q5_1 take the activation block sum as f16(dx * S), like llama.cpp's Q8_1, which adds
//   2^-11 |m| sum_j |x'_j| per block.
// Sizes: awkward row counts (1, 7, 16, 17, 45: padded groups, single rows) and every token
// count 1-17 (tiles of 8, leftovers 1-7), at every level the CPU has.
#include <QtTest>
#include <cmath>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/repacked_kernels.h"
#include "backend/cpu/thread_pool.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"
#include "gguf/gguf_file.h"

using namespace ember;
using cpu::SimdLevel;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)

namespace {

const std::vector<GgmlType> kRepackable = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                           GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K,
                                           GgmlType::Q5_K, GgmlType::Q6_K};

bool isKQuant(GgmlType t) {
  return t == GgmlType::Q4_K || t == GgmlType::Q5_K || t == GgmlType::Q6_K;
}

// d, m and q of row r, element j of block b, read through the documented layout.
struct RepackedWeight {
  float d, m;
  int q;
};
RepackedWeight readRepacked(const cpu::RepackedMatrix& m, int64_t row, int64_t j) {
  const uint8_t* blk = m.block(row / 16, j / 32);
  const int r = int(row % 16), e = int(j % 32);
  RepackedWeight w;
  w.d = cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk + m.quantBytes + 2 * r));
  w.m = cpu::quant::fp16ToFloat(m.minBits(blk, r));
  if (m.layout == cpu::RepackedLayout::Int8) {
    w.q = int8_t(blk[64 * (e / 4) + 4 * r + e % 4]);
  } else {
    const uint8_t byte = blk[64 * ((e % 16) / 4) + 4 * r + e % 4];
    w.q = e < 16 ? byte & 0x0f : byte >> 4;
    if (m.layout == cpu::RepackedLayout::Nibble5) w.q |= (blk[256 + 4 * r + e % 4] >> (e / 4) & 1) << 4;
  }
  w.q -= m.quantOffset;
  return w;
}

// Bound on |w' - w| for element j of `row` (see the header comment).
double weightBound(GgmlType type, const cpu::RepackedMatrix& m, int64_t row, int64_t j,
                   const std::vector<double>& source) {
  if (!isKQuant(type)) return 0.0;
  const RepackedWeight w = readRepacked(m, row, j);
  if (type != GgmlType::Q6_K)
    return std::ldexp(std::fabs(w.d) * std::abs(w.q) + std::fabs(w.m), -11) * (1 + 0x1p-10);
  double amax = 0;
  for (int64_t k = j / 32 * 32; k < j / 32 * 32 + 32; ++k)
    amax = std::max(amax, std::fabs(source[size_t(k)]));
  return 0.5 * w.d + std::ldexp(amax, -11) + 1e-7 * std::fabs(source[size_t(j)]);
}

int64_t colsFor(GgmlType type, int variant) { return isKQuant(type) ? 256 * (1 + variant) : 32 * (1 + 3 * variant); }

}  // namespace

class TestCpuFastKernels : public QObject {
  Q_OBJECT

 private slots:
  void repackMatchesSource_data() {
    QTest::addColumn<GgmlType>("type");
    for (GgmlType t : kRepackable) QTest::newRow(std::string(gguf::ggmlTypeName(t)).c_str()) << t;
  }
  void repackMatchesSource() {
    QFETCH(GgmlType, type);
    cpu::ThreadPool pool(2);
    for (int64_t rows : {1, 7, 16, 17, 45}) {
      for (int variant = 0; variant < 2; ++variant) {
        const int64_t cols = colsFor(type, variant);
        const test::OwnedMatrix src = test::randomMatrix(type, rows, cols, uint32_t(rows * 7 + variant));
        const auto packed = cpu::repackMatrix(src.view, pool);
        QVERIFY(packed != nullptr);
        QCOMPARE(packed->groups, (rows + 15) / 16);
        // Decode reads every byte once per token: a repacked 16 x 32 block is as large as 16 of
        // the source's 32-element blocks (ggml's block sizes; Q4_0 keeps m, 320 for 288 bytes).
        if (!isKQuant(type) && type != GgmlType::Q4_0)
          QCOMPARE(packed->blockBytes, size_t(16 * gguf::ggmlTypeTraits(uint32_t(type))->typeSize));
        std::vector<float> unpacked(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
          const std::vector<double> ref = test::dequantizedRow(src.view, r);
          cpu::dequantizeRepackedRow(*packed, r, unpacked.data());
          for (int64_t j = 0; j < cols; ++j) {
            const RepackedWeight w = readRepacked(*packed, r, j);
            // dequantizeRepackedRow follows the documented layout.
            QCOMPARE(unpacked[size_t(j)], w.d * float(w.q) + w.m);
            const double err = std::fabs(double(unpacked[size_t(j)]) - ref[size_t(j)]);
            const double bound = weightBound(type, *packed, r, j, ref);
            if (err > bound)
              QFAIL(qPrintable(QStringLiteral("row %1 col %2: %3 vs %4 (bound %5)")
                                   .arg(r).arg(j).arg(unpacked[size_t(j)]).arg(ref[size_t(j)])
                                   .arg(bound)));
          }
        }
        // Padding rows of the last group are zero weights.
        if (rows % 16 != 0) {
          const RepackedWeight pad = readRepacked(*packed, packed->groups * 16 - 1, 0);
          QCOMPARE(pad.d * float(pad.q) + pad.m, 0.0f);
        }
      }
    }
  }

  void rejectsTypesWithoutLayout() {
    cpu::ThreadPool pool(1);
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
      const test::OwnedMatrix src = test::randomMatrix(t, 4, 64, 1);
      QVERIFY(!cpu::isRepackable(t));
      QVERIFY(cpu::repackMatrix(src.view, pool) == nullptr);
    }
  }

  // Every level's matmul on repacked weights equals the scalar kernel's, bit for bit, for token
  // counts 1-17 and thread counts 1 and 2; and lies within the derived bound of the exact
  // product of the source weights with the unquantized activations.
  void fastMatmulMatchesReferences_data() { repackMatchesSource_data(); }
  void fastMatmulMatchesReferences() {
    QFETCH(GgmlType, type);
    cpu::ThreadPool pool1(1), pool2(2);
    for (int64_t rows : {1, 7, 17, 45}) {
      const int variant = rows % 2;
      const int64_t cols = colsFor(type, variant);
      test::OwnedMatrix src = test::randomMatrix(type, rows, cols, uint32_t(100 + rows));
      const auto packed = cpu::repackMatrix(src.view, pool2);
      QVERIFY(packed != nullptr);
      cpu::WeightMatrix fast = src.view;
      fast.repacked = packed.get();
      std::vector<std::vector<double>> w(static_cast<size_t>(rows)), ew(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        w[size_t(r)] = test::dequantizedRow(src.view, r);
        ew[size_t(r)].resize(size_t(cols));
        for (int64_t j = 0; j < cols; ++j)
          ew[size_t(r)][size_t(j)] = weightBound(type, *packed, r, j, w[size_t(r)]);
      }
      for (int64_t n = 1; n <= 17; ++n) {
        const std::vector<float> x = test::randomActivations(n * cols, uint32_t(n * 31 + rows));
        std::vector<float> scalar(static_cast<size_t>(n * rows));
        cpu::MatmulScratch scratch;
        {
          test::SimdLevelGuard guard(SimdLevel::Scalar);
          cpu::matmul(pool1, fast, x.data(), n, scalar.data(), scratch);
        }
        for (SimdLevel level : test::supportedLevels()) {
          test::SimdLevelGuard guard(level);
          for (cpu::ThreadPool* pool : {&pool1, &pool2}) {
            std::vector<float> y(static_cast<size_t>(n * rows), NAN);
            cpu::matmul(*pool, fast, x.data(), n, y.data(), scratch);
            if (std::memcmp(y.data(), scalar.data(), y.size() * sizeof(float)) != 0)
              QFAIL(qPrintable(QStringLiteral("%1, %2 rows, %3 tokens, %4 threads: differs from "
                                              "the scalar kernel")
                                   .arg(cpu::simdLevelName(level)).arg(rows).arg(n)
                                   .arg(pool->size())));
          }
        }
        for (int64_t t = 0; t < n; ++t) {
          const float* xt = x.data() + t * cols;
          for (int64_t r = 0; r < rows; ++r) {
            double exact = 0, bound = 0, magnitude = 0;
            for (int64_t b = 0; b < cols / 32; ++b) {
              double amax = 0;
              for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(double(xt[32 * b + j])));
              const double ex = amax * (1.0 / 254 * (1 + 1e-5) + 0x1p-11);
              if (packed->roundedMinSum) {
                double xAbs = 0;
                for (int j = 0; j < 32; ++j) xAbs += std::fabs(double(xt[32 * b + j])) + ex;
                bound += std::ldexp(std::fabs(readRepacked(*packed, r, 32 * b).m) * xAbs, -11);
              }
              for (int64_t j = 32 * b; j < 32 * b + 32; ++j) {
                const double wj = w[size_t(r)][size_t(j)], ewj = ew[size_t(r)][size_t(j)];
                exact += wj * xt[j];
                bound += std::fabs(wj) * ex + std::fabs(xt[j]) * ewj + ex * ewj;
                magnitude += (std::fabs(wj) + ewj) * (std::fabs(xt[j]) + ex);
              }
            }
            bound += 4.0 * double(cols / 32 + 2) * 0x1p-24 * magnitude;
            const double got = scalar[size_t(t * rows + r)];
            if (!(std::fabs(got - exact) <= bound))
              QFAIL(qPrintable(QStringLiteral("%1 rows, %2 tokens: y[%3][%4] = %5, exact %6, "
                                              "bound %7")
                                   .arg(rows).arg(n).arg(t).arg(r).arg(got).arg(exact)
                                   .arg(bound)));
          }
        }
      }
    }
  }

  // The lossless types sum in llama.cpp's order (RepackedMatrix::llamaLanes), so their fast
  // products equal the reference kernels' bit for bit at the AVX2 level (the level whose order
  // is llama.cpp's, the reference default), for 1-17 tokens and at every fast SIMD level
  // (AVX-512 runs tasks of 8 tokens or more through the staged lane kernel, fewer through
  // laneTile: both are checked here).
  // "Q5_0 fused" is approx mode's Q5_0 (llamaLanes cleared: one float step per block): every
  // level equals the scalar fused kernel bit for bit, and it is compared with the reference as
  // every type is at the AVX-512 level, whose reference kernels reorder the float sums: both
  // sides add the same exact integer block sums times the same d * dx, so they differ by float
  // rounding only, at most (nb + 3) 2^-24 sum_j |w_j x'_j| each side (x' the quantized
  // activations); checked against 4 (nb + 2) 2^-24 sum_j |w_j x'_j|.
  void losslessTypesMatchReferenceKernels_data() {
    QTest::addColumn<GgmlType>("type");
    QTest::addColumn<bool>("fused");
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                       GgmlType::Q8_0})
      QTest::newRow(std::string(gguf::ggmlTypeName(t)).c_str()) << t << false;
    QTest::newRow("Q5_0 fused") << GgmlType::Q5_0 << true;
  }
  void losslessTypesMatchReferenceKernels() {
    QFETCH(GgmlType, type);
    QFETCH(bool, fused);
    cpu::ThreadPool pool(2);
    if (!cpu::simdLevelSupported(SimdLevel::Avx2)) QSKIP("the CPU has no AVX2");
    const int64_t rows = 45, cols = 576;
    test::OwnedMatrix src = test::randomMatrix(type, rows, cols, 77);
    const auto packed = cpu::repackMatrix(src.view, pool);
    QVERIFY(packed->llamaLanes);
    if (fused) packed->llamaLanes = false;
    const bool bitExact = !fused;
    cpu::WeightMatrix fast = src.view;
    fast.repacked = packed.get();
    cpu::MatmulScratch scratch;
    double worst = 0;
    // Fast against reference within the rounding bound above (x quantized as the fast path does).
    auto checkBound = [&](const std::vector<float>& x, int64_t n, const std::vector<float>& yFast,
                          const std::vector<float>& yRef, const QString& what) {
      std::vector<uint8_t> row(cpu::quant::activationRowBytes(cpu::quant::ActivationFormat::Q8x32, cols));
      for (int64_t t = 0; t < n; ++t) {
        cpu::quant::kernelsFor(GgmlType::Q8_0, cpu::SimdLevel::Scalar)->prepare(x.data() + t * cols, cols, row.data());
        const std::vector<double> xq =
            test::reconstructActivations(cpu::quant::ActivationFormat::Q8x32, row.data(), cols);
        for (int64_t r = 0; r < rows; ++r) {
          const std::vector<double> w = test::dequantizedRow(src.view, r);
          double magnitude = 0;
          for (int64_t j = 0; j < cols; ++j) magnitude += std::fabs(w[size_t(j)] * xq[size_t(j)]);
          const double bound = 4.0 * double(cols / 32 + 2) * 0x1p-24 * magnitude;
          const size_t i = size_t(t * rows + r);
          const double diff = std::fabs(double(yFast[i]) - yRef[i]);
          worst = std::max(worst, diff / magnitude);
          if (!(diff <= bound))
            QFAIL(qPrintable(QStringLiteral("%1, token %2 row %3: fast %4, reference %5, bound %6")
                                 .arg(what).arg(t).arg(r).arg(yFast[i]).arg(yRef[i]).arg(bound)));
        }
      }
    };
    for (int64_t tokens = 1; tokens <= 17; ++tokens) {
      const std::vector<float> x = test::randomActivations(tokens * cols, uint32_t(tokens));
      std::vector<float> yRef(static_cast<size_t>(tokens * rows)), yFast(yRef.size());
      {
        test::SimdLevelGuard guard(SimdLevel::Avx2);
        cpu::matmul(pool, src.view, x.data(), tokens, yRef.data(), scratch);
      }
      std::vector<float> yScalar(yRef.size());
      {
        test::SimdLevelGuard guard(SimdLevel::Scalar);
        cpu::matmul(pool, fast, x.data(), tokens, yScalar.data(), scratch);
      }
      for (SimdLevel level : test::supportedLevels()) {
        test::SimdLevelGuard guard(level);
        cpu::matmul(pool, fast, x.data(), tokens, yFast.data(), scratch);
        const QString what =
            QStringLiteral("%1 tokens at %2").arg(tokens).arg(cpu::simdLevelName(level));
        if (bitExact) {
          QVERIFY2(yFast == yRef, qPrintable(what));
        } else {
          QVERIFY2(yFast == yScalar, qPrintable(what + " against the scalar fused kernel"));
          checkBound(x, tokens, yFast, yRef, what);
        }
      }
    }
    if (cpu::simdLevelSupported(SimdLevel::Avx512Vnni)) {
      const int64_t n = 9;
      const std::vector<float> x = test::randomActivations(n * cols, 5);
      std::vector<float> yRef(static_cast<size_t>(n * rows)), yFast(yRef.size());
      {
        test::SimdLevelGuard guard(SimdLevel::Avx512Vnni);
        cpu::matmul(pool, src.view, x.data(), n, yRef.data(), scratch);
      }
      cpu::matmul(pool, fast, x.data(), n, yFast.data(), scratch);
      checkBound(x, n, yFast, yRef, QStringLiteral("AVX-512 reference"));
    }
    qInfo("worst |fast - reference| / sum |w x'|: %.3g", worst);
  }

  // Real matrices of both models: the fast product against the reference kernels, which use
  // the same activations for the lossless types (bound as above) and per-256 Q8_K ones for the
  // K-quants (then only the derived bound of fastMatmulMatchesReferences applies; reported).
  void realMatrices_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tensor");
    const QString smol = "SmolLM2-135M-Instruct.Q4_1.gguf", gemma = "gemma-3-270m-q4_k_m.gguf";
    QTest::newRow("SmolLM2 ffn_down Q4_1") << smol << "blk.0.ffn_down.weight";
    QTest::newRow("SmolLM2 attn_k Q4_1") << smol << "blk.3.attn_k.weight";
    QTest::newRow("SmolLM2 token_embd Q8_0") << smol << "token_embd.weight";
    QTest::newRow("Gemma attn_q Q5_0") << gemma << "blk.0.attn_q.weight";
    QTest::newRow("Gemma attn_output Q4_K") << gemma << "blk.0.attn_output.weight";
    QTest::newRow("Gemma ffn_down Q6_K") << gemma << "blk.0.ffn_down.weight";
  }
  void realMatrices() {
    QFETCH(QString, model);
    QFETCH(QString, tensor);
    EMBER_REQUIRE_MODEL(path, model);
    const auto file = gguf::GgufFile::open(path.toStdString());
    const gguf::TensorInfo* info = file->findTensor(tensor.toStdString());
    QVERIFY(info);
    cpu::ThreadPool pool(2);
    const cpu::WeightMatrix w = cpu::weightMatrix(*info);
    const auto packed = cpu::repackMatrix(w, pool);
    QVERIFY(packed != nullptr);
    cpu::WeightMatrix fast = w;
    fast.repacked = packed.get();
    for (int64_t n : {1, 8, 13}) {
      const std::vector<float> x = test::randomActivations(n * w.cols, uint32_t(n));
      std::vector<float> yRef(static_cast<size_t>(n * w.rows)), yFast(yRef.size());
      cpu::MatmulScratch scratch;
      cpu::matmul(pool, w, x.data(), n, yRef.data(), scratch);
      cpu::matmul(pool, fast, x.data(), n, yFast.data(), scratch);
      double worst = 0, scale = 0;
      for (size_t i = 0; i < yRef.size(); ++i) {
        worst = std::max(worst, std::fabs(double(yFast[i]) - yRef[i]));
        scale = std::max(scale, std::fabs(double(yRef[i])));
      }
      qInfo("%d tokens: max |fast - reference| %.3g (max |y| %.3g)", int(n), worst, scale);
    }
  }

  // matmulShared over repacked matrices (and a mix with a matrix the reference kernels serve)
  // equals separate products, also when a y aliases x.
  void sharedAndAliasedProducts() {
    cpu::ThreadPool pool(2);
    const int64_t cols = 256, n = 5;
    test::OwnedMatrix a = test::randomMatrix(GgmlType::Q4_K, 40, cols, 1);
    test::OwnedMatrix b = test::randomMatrix(GgmlType::Q6_K, 24, cols, 2);
    test::OwnedMatrix c = test::randomMatrix(GgmlType::F16, 8, cols, 3);
    const auto pa = cpu::repackMatrix(a.view, pool), pb = cpu::repackMatrix(b.view, pool);
    a.view.repacked = pa.get();
    b.view.repacked = pb.get();
    const std::vector<float> x = test::randomActivations(n * cols, 9);
    cpu::MatmulScratch scratch;
    std::vector<float> ya(n * 40), yb(n * 24), yc(n * 8);
    cpu::matmul(pool, a.view, x.data(), n, ya.data(), scratch);
    cpu::matmul(pool, b.view, x.data(), n, yb.data(), scratch);
    cpu::matmul(pool, c.view, x.data(), n, yc.data(), scratch);

    std::vector<float> sa(n * 40), sb(n * 24), sc(n * 8);
    const cpu::MatmulTarget both[] = {{&a.view, sa.data()}, {&b.view, sb.data()}};
    cpu::matmulShared(pool, both, x.data(), n, scratch);
    QVERIFY(sa == ya && sb == yb);
    const cpu::MatmulTarget mixed[] = {{&a.view, sa.data()}, {&c.view, sc.data()}};
    std::fill(sa.begin(), sa.end(), 0.0f);
    cpu::matmulShared(pool, mixed, x.data(), n, scratch);
    QVERIFY(sa == ya && sc == yc);

    // y over x: 24 rows of output in a buffer that held the 256-wide input.
    std::vector<float> inPlace = x;
    cpu::matmul(pool, b.view, inPlace.data(), n, inPlace.data(), scratch);
    QVERIFY(std::equal(yb.begin(), yb.end(), inPlace.begin()));
  }
};

QTEST_APPLESS_MAIN(TestCpuFastKernels)
#include "test_cpu_fast_kernels.moc"
