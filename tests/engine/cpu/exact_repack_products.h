#pragma once
// The product check shared by the lossless repacked layouts' tests (NibbleK for Q4_K, SixK for
// Q6_K): a repacked matrix times activations equals the reference kernels bit for bit.
// Reference: the reference kernels at the AVX2 level (the reference default, whose float orders
// are llama.cpp's), 2 threads.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/thread_pool.h"
#include "cpu_test_support.h"

namespace ember::test {

inline bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

using ExactRepack = std::unique_ptr<cpu::RepackedMatrix> (*)(const cpu::WeightMatrix&,
                                                             cpu::ThreadPool&, bool);

// For each row count (768 columns at 24 rows, else 512): a random `type` matrix repacked by
// `repack`, times 1-17 tokens at every supported SIMD level with 1 and 2 threads. Fails with the
// first case that differs from the reference.
inline void expectRepackedProductsEqualReference(gguf::GgmlType type, ExactRepack repack,
                                                 std::initializer_list<int64_t> rowCounts) {
  cpu::ThreadPool pool1(1), pool2(2);
  for (int64_t rows : rowCounts) {
    const int64_t cols = rows == 24 ? 768 : 512;
    const OwnedMatrix src = randomMatrix(type, rows, cols, uint32_t(7 * rows));
    const auto packed = repack(src.view, pool2, false);
    QVERIFY(packed != nullptr);
    cpu::WeightMatrix fast = src.view;
    fast.repacked = packed.get();
    cpu::MatmulScratch scratch;
    for (int64_t n = 1; n <= 17; ++n) {
      const std::vector<float> x = randomActivations(n * cols, uint32_t(n * 13 + rows));
      std::vector<float> yRef(static_cast<size_t>(n * rows));
      {
        SimdLevelGuard guard(cpu::SimdLevel::Avx2);
        cpu::matmul(pool2, src.view, x.data(), n, yRef.data(), scratch);
      }
      for (cpu::SimdLevel level : supportedLevels()) {
        SimdLevelGuard guard(level);
        for (cpu::ThreadPool* pool : {&pool1, &pool2}) {
          std::vector<float> y(yRef.size(), NAN);
          cpu::matmul(*pool, fast, x.data(), n, y.data(), scratch);
          if (!sameBits(y, yRef))
            QFAIL(qPrintable(QStringLiteral("%1 rows, %2 tokens, %3, %4 threads: differs from "
                                            "the reference kernels")
                                 .arg(rows).arg(n).arg(cpu::simdLevelName(level))
                                 .arg(pool->size())));
        }
      }
    }
  }
}

}  // namespace ember::test
