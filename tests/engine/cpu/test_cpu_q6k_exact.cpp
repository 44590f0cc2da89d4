// Q6_K repacked without loss (RepackedLayout::SixK, backend/cpu/repack.h) and its kernels,
// which "fast" mode runs on Q6_K matrices where the fast SIMD level is AVX-512 VNNI.
//
// References:
// - layout: the repacked bytes read through the layout repack.h documents give the source's
//   scalar dequantization (quant/dequantize.cpp, checked against gguf-py in
//   test_cpu_dequantize) bit for bit, and so does dequantizeRepackedRow.
// - products: the reference Q6_K kernels at the AVX2 level (the reference default, whose float
//   orders are llama.cpp's: its vec_dot lanes below 8 tokens, its tiled order from 8), bit for
//   bit, at every SIMD level, thread counts 1 and 2, token counts 1-17 (both orders, tiles of 8
//   and of 2 and their remainders) and row counts with a padded last group. The integer sums
//   are exact and the float steps the same, so no tolerance is needed.
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

// Element e (0..255) of super-block b of `row`, read through the documented SixK layout.
float readSixK(const cpu::RepackedMatrix& m, int64_t row, int64_t b, int e) {
  const uint8_t* blk = m.block(row / 16, b);
  const int r = int(row % 16), c = e / 32, k = (e % 32) / 4, i = e % 4;
  const uint8_t low = blk[64 * (8 * (c / 2) + k) + 4 * r + i];
  const uint8_t high = blk[2048 + 64 * (8 * (c / 4) + k) + 4 * r + i];
  const int q = (c % 2 ? low >> 4 : low & 0x0f) | ((high >> (2 * (c % 4))) & 3) << 4;
  const float d = cpu::quant::fp16ToFloat(cpu::quant::loadU16(blk + 3328 + 2 * r));
  const int scale = int8_t(blk[3072 + 32 * c + 2 * r + (e % 32) / 16]);
  return d * float(scale) * float(q - 32);
}

bool needsAvx512() { return !cpu::simdLevelSupported(SimdLevel::Avx512Vnni); }

}  // namespace

class TestCpuQ6KExact : public QObject {
  Q_OBJECT

 private slots:
  void layoutMatchesSource() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: SixK is repacked only where that kernel runs");
    cpu::ThreadPool pool(2);
    for (int64_t rows : {1, 16, 45}) {
      for (int64_t cols : {256, 768}) {
        const test::OwnedMatrix src = test::randomMatrix(GgmlType::Q6_K, rows, cols, uint32_t(rows + cols));
        const auto packed = cpu::repackQ6KExact(src.view, pool);
        QVERIFY(packed != nullptr);
        QCOMPARE(packed->layout, cpu::RepackedLayout::SixK);
        QCOMPARE(packed->blockBytes, size_t(3360));  // 16 x 210 source bytes
        std::vector<float> ref(static_cast<size_t>(cols)), unpacked(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
          cpu::quant::dequantizeScalar(GgmlType::Q6_K, src.view.data + r * src.view.rowBytes, cols,
                                       ref.data());
          cpu::dequantizeRepackedRow(*packed, r, unpacked.data());
          QVERIFY(test::sameBits(unpacked, ref));
          for (int64_t e = 0; e < cols; ++e)
            QCOMPARE(readSixK(*packed, r, e / 256, int(e % 256)), ref[size_t(e)]);
        }
      }
    }
  }

  void onlyEligibleMatrices() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: SixK is repacked only where that kernel runs");
    cpu::ThreadPool pool(1);
    QVERIFY(cpu::repackQ6KExact(test::randomMatrix(GgmlType::Q4_K, 16, 256, 1).view, pool) == nullptr);
    test::SimdLevelGuard guard(SimdLevel::Avx2);  // no SixK kernel at this level
    QVERIFY(cpu::repackQ6KExact(test::randomMatrix(GgmlType::Q6_K, 16, 256, 1).view, pool) == nullptr);
  }

  void productsEqualReferenceKernels() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: SixK is repacked only where that kernel runs");
    test::expectRepackedProductsEqualReference(GgmlType::Q6_K, &cpu::repackQ6KExact, {1, 7, 24, 45});
  }

  // One of Gemma-3's Q6_K feed-forward down matrices (640 x 2048), also shared with a Q4_K
  // (NibbleK) matrix in one call, and with a Q5_0 one (activation formats differ).
  void realMatrixEqualsReferenceKernels() {
    if (needsAvx512()) QSKIP("the CPU has no AVX-512 VNNI: SixK is repacked only where that kernel runs");
    EMBER_REQUIRE_MODEL(path, "gemma-3-270m-q4_k_m.gguf");
    const auto file = gguf::GgufFile::open(path.toStdString());
    const gguf::TensorInfo* tensor = nullptr;
    for (int l = 0; l < 64 && tensor == nullptr; ++l) {
      const auto* t = file->findTensor("blk." + std::to_string(l) + ".ffn_down.weight");
      if (t != nullptr && t->type == GgmlType::Q6_K) tensor = t;
    }
    QVERIFY2(tensor != nullptr, "no Q6_K ffn_down in the model");
    cpu::ThreadPool pool(2);
    const cpu::WeightMatrix w = cpu::weightMatrix(*tensor);
    const auto packed = cpu::repackQ6KExact(w, pool);
    QVERIFY(packed != nullptr);
    cpu::WeightMatrix fast = w;
    fast.repacked = packed.get();
    test::OwnedMatrix q4k = test::randomMatrix(GgmlType::Q4_K, 32, w.cols, 5);
    const auto q4kPacked = cpu::repackQ4KExact(q4k.view, pool);
    QVERIFY(q4kPacked != nullptr);
    cpu::WeightMatrix q4kFast = q4k.view;
    q4kFast.repacked = q4kPacked.get();
    test::OwnedMatrix q50 = test::randomMatrix(GgmlType::Q5_0, 48, w.cols, 3);
    const auto q50Packed = cpu::repackMatrix(q50.view, pool);
    cpu::WeightMatrix q50Fast = q50.view;
    q50Fast.repacked = q50Packed.get();
    cpu::MatmulScratch scratch;
    for (int64_t n : {1, 3, 8, 13, 64}) {
      const std::vector<float> x = test::randomActivations(n * w.cols, uint32_t(n));
      std::vector<float> yRef(static_cast<size_t>(n * w.rows)), yFast(yRef.size());
      std::vector<float> y4Ref(static_cast<size_t>(n * 32)), y5Ref(static_cast<size_t>(n * 48));
      {
        test::SimdLevelGuard guard(SimdLevel::Avx2);  // the reference default
        cpu::matmul(pool, w, x.data(), n, yRef.data(), scratch);
        cpu::matmul(pool, q4k.view, x.data(), n, y4Ref.data(), scratch);
        cpu::matmul(pool, q50.view, x.data(), n, y5Ref.data(), scratch);
      }
      cpu::matmul(pool, fast, x.data(), n, yFast.data(), scratch);
      QVERIFY2(test::sameBits(yFast, yRef), qPrintable(QStringLiteral("%1 tokens").arg(n)));
      std::vector<float> a(yRef.size()), b4(y4Ref.size()), b5(y5Ref.size());
      const cpu::MatmulTarget all[] = {{&fast, a.data()}, {&q4kFast, b4.data()}, {&q50Fast, b5.data()}};
      cpu::matmulShared(pool, all, x.data(), n, scratch);
      QVERIFY2(test::sameBits(a, yRef), qPrintable(QStringLiteral("shared %1 tokens").arg(n)));
      QVERIFY2(test::sameBits(b4, y4Ref), qPrintable(QStringLiteral("shared Q4_K %1 tokens").arg(n)));
      QVERIFY2(test::sameBits(b5, y5Ref), qPrintable(QStringLiteral("shared Q5_0 %1 tokens").arg(n)));
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuQ6KExact)
#include "test_cpu_q6k_exact.moc"
