// Q4_K repacked without loss (RepackedLayout::NibbleK, backend/cpu/repack.h) and its kernels,
// which "fast" mode runs on Q4_K matrices with a multiple of 8 rows.
//
// References:
// - layout: the repacked bytes read through the layout repack.h documents give the source's
//   scalar dequantization (quant/dequantize.cpp, checked against gguf-py in
//   test_cpu_dequantize) bit for bit, and so does dequantizeRepackedRow.
// - products: the reference Q4_K kernels at the AVX2 level (the reference default, whose float
//   order is llama.cpp's, including its repacked order for tokens in groups of 4), bit for bit,
//   at every SIMD level, thread counts 1 and 2, token counts 1-17 (groups of 4 and the tokens
//   left over, tiles of 4 and their remainders) and row counts with a padded last group.
//   The integer sums are exact and the float steps the same, so no tolerance is needed.
#include <QtTest>
#include <cmath>
#include <cstring>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant/block_formats.h"
#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/thread_pool.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"
#include "exact_repack_products.h"
#include "gguf/gguf_file.h"

using namespace ember;
using cpu::SimdLevel;
using gguf::GgmlType;

namespace {

// Element e (0..255) of super-block b of `row`, read through the documented NibbleK layout.
float readNibbleK(const cpu::RepackedMatrix& m, int64_t row, int64_t b, int e) {
  const uint8_t* blk = m.block(row / 16, b);
  const int r = int(row % 16), j = e / 64, s = e / 32, k = (e % 32) / 4, i = e % 4;
  const uint8_t byte = blk[64 * (8 * j + k) + 4 * r + i];
  const int q = s % 2 ? byte >> 4 : byte & 0x0f;
  const float d = cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk + 2304 + 2 * r));
  const float dmin = cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk + 2336 + 2 * r));
  const int scale = blk[2048 + 16 * s + r], min = blk[2176 + 32 * j + 2 * r + s % 2];
  return d * float(scale) * float(q) - dmin * float(min);
}

bool needsAvx512() { return !cpu::simdLevelSupported(SimdLevel::Avx512Vnni); }

}  // namespace

class TestCpuQ4KExact : public QObject {
  Q_OBJECT

 private slots:
  void layoutMatchesSource() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: NibbleK is repacked only where that kernel runs");
    cpu::ThreadPool pool(2);
    for (int64_t rows : {8, 24, 40}) {
      for (int64_t cols : {256, 768}) {
        const test::OwnedMatrix src = test::randomMatrix(GgmlType::Q4_K, rows, cols, uint32_t(rows + cols));
        const auto packed = cpu::repackQ4KExact(src.view, pool);
        QVERIFY(packed != nullptr);
        QCOMPARE(packed->layout, cpu::RepackedLayout::NibbleK);
        QCOMPARE(packed->blockBytes, size_t(2368));  // 16 x 144 source bytes + 64
        std::vector<float> ref(static_cast<size_t>(cols)), unpacked(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
          cpu::quant::dequantizeScalar(GgmlType::Q4_K, src.view.data + r * src.view.rowBytes, cols,
                                       ref.data());
          cpu::dequantizeRepackedRow(*packed, r, unpacked.data());
          QVERIFY(unpacked == ref);
          for (int64_t e = 0; e < cols; ++e)
            QCOMPARE(readNibbleK(*packed, r, e / 256, int(e % 256)), ref[size_t(e)]);
        }
      }
    }
  }

  void onlyEligibleMatrices() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: NibbleK is repacked only where that kernel runs");
    cpu::ThreadPool pool(1);
    // 12 rows: the reference kernels take another order there (not a multiple of 8).
    QVERIFY(cpu::repackQ4KExact(test::randomMatrix(GgmlType::Q4_K, 12, 256, 1).view, pool) == nullptr);
    QVERIFY(cpu::repackQ4KExact(test::randomMatrix(GgmlType::Q6_K, 16, 256, 1).view, pool) == nullptr);
    test::SimdLevelGuard guard(SimdLevel::Avx2);  // no NibbleK kernel at this level
    QVERIFY(cpu::repackQ4KExact(test::randomMatrix(GgmlType::Q4_K, 16, 256, 1).view, pool) == nullptr);
  }

  void productsEqualReferenceKernels() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: NibbleK is repacked only where that kernel runs");
    test::expectRepackedProductsEqualReference(GgmlType::Q4_K, &cpu::repackQ4KExact, {8, 24, 40});
  }

  // Gemma-3's attention output matrix (Q4_K, 640 x 1024), also shared with a Q5_0 matrix in
  // one call (activation formats differ) and with y over x.
  void realMatrixEqualsReferenceKernels() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: NibbleK is repacked only where that kernel runs");
    EMBER_REQUIRE_MODEL(path, "gemma-3-270m-q4_k_m.gguf");
    const auto file = gguf::GgufFile::open(path.toStdString());
    cpu::ThreadPool pool(2);
    const cpu::WeightMatrix w = cpu::weightMatrix(*file->findTensor("blk.0.attn_output.weight"));
    const auto packed = cpu::repackQ4KExact(w, pool);
    QVERIFY(packed != nullptr);
    cpu::WeightMatrix fast = w;
    fast.repacked = packed.get();
    test::OwnedMatrix other = test::randomMatrix(GgmlType::Q5_0, 48, w.cols, 3);
    const auto otherPacked = cpu::repackMatrix(other.view, pool);
    cpu::WeightMatrix otherFast = other.view;
    otherFast.repacked = otherPacked.get();
    cpu::MatmulScratch scratch;
    for (int64_t n : {1, 3, 8, 13, 64}) {
      const std::vector<float> x = test::randomActivations(n * w.cols, uint32_t(n));
      std::vector<float> yRef(static_cast<size_t>(n * w.rows)), yFast(yRef.size()), yOther(static_cast<size_t>(n * 48));
      {
        // The reference default (the earlier tests' guards leave the detected level forced).
        test::SimdLevelGuard guard(SimdLevel::Avx2);
        cpu::matmul(pool, w, x.data(), n, yRef.data(), scratch);
        cpu::matmul(pool, other.view, x.data(), n, yOther.data(), scratch);
      }
      cpu::matmul(pool, fast, x.data(), n, yFast.data(), scratch);
      QVERIFY2(yFast == yRef, qPrintable(QStringLiteral("%1 tokens").arg(n)));
      std::vector<float> sharedA(yRef.size()), sharedB(yOther.size());
      const cpu::MatmulTarget both[] = {{&fast, sharedA.data()}, {&otherFast, sharedB.data()}};
      cpu::matmulShared(pool, both, x.data(), n, scratch);
      QVERIFY(sharedA == yRef);
      QVERIFY2(sharedB == yOther, qPrintable(QStringLiteral("shared %1 tokens").arg(n)));
      std::vector<float> yOtherFast(yOther.size());
      cpu::matmul(pool, otherFast, x.data(), n, yOtherFast.data(), scratch);
      QVERIFY2(yOtherFast == yOther, qPrintable(QStringLiteral("Q5_0 alone %1 tokens").arg(n)));

      std::vector<float> inPlace = x;  // 640 outputs over the 1024-wide input
      cpu::matmul(pool, fast, inPlace.data(), n, inPlace.data(), scratch);
      QVERIFY(std::equal(yRef.begin(), yRef.end(), inPlace.begin()));
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuQ4KExact)
#include "test_cpu_q4k_exact.moc"
