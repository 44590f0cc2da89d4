// The attention op and its vector kernels. Kernels are compared with their defining formula in
// double, and the SIMD kernels with the scalar ones bit for bit (both must round as llama.cpp's CPU
// attention does, see ops/reference_order.h); fp16 rounding uses the compiler's _Float16 (GCC, IEEE
// 754 round to nearest even). The polynomial exp is held to its stated bound (1.5 ulp) against
// std::exp in double. Attention over a scattered block table is compared with a contiguous
// softmax(q K^T * scale) V computed in double in this file on awkward sizes, with q, K, V and the
// weights rounded to fp16 where llama.cpp's F16-cache attention rounds them. The tiled attention
// (several queries per pass over K and V) is compared with the per-query attendHead bit for bit.
#include <QtTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/ops/attention.h"
#include "backend/cpu/ops/half.h"
#include "backend/cpu/ops/reference_order.h"
#include "backend/cpu/ops/vector_math.h"
#include "op_test_support.h"

using namespace ember::cpu::ops;
using ember::test::compareClose;
using ember::test::randomVector;

Q_DECLARE_METATYPE(StepKind)

class TestAttentionOps : public QObject {
  Q_OBJECT

 private slots:
  void vectorKernelsMatchScalar_data() {
    QTest::addColumn<int>("n");
    for (int n : {1, 7, 19, 64, 111, 256, 300, 989}) QTest::addRow("n=%d", n) << n;
  }

  void vectorKernelsMatchScalar() {
    // Every kernel against the defining formula in double, and the SIMD kernels bit for bit
    // against the scalar ones (they must round identically: see reference_order.h).
    QFETCH(int, n);
    std::mt19937 rng{uint32_t(n)};
    std::vector<float> a = randomVector(rng, size_t(n)), b = randomVector(rng, size_t(n));
    roundToHalfPrecision(a.data(), n);  // dotF16's first operand is fp16-representable
    std::vector<uint16_t> bHalf(static_cast<size_t>(n));
    double refDot = 0;
    for (int i = 0; i < n; ++i) {
      const _Float16 h = _Float16(b[size_t(i)]);
      std::memcpy(&bHalf[size_t(i)], &h, 2);
      refDot += double(a[size_t(i)]) * double(float(h));
    }
    const int chunks = (n + 15) / 16;
    std::vector<float> scores = randomVector(rng, size_t(chunks) * 16, 8.0f);
    scores[0] = -INFINITY;  // a masked position
    const float maxScore = *std::max_element(scores.begin(), scores.end());

    struct Results {
      float dot, dot64;
      std::vector<float> axpy, exps, halves, silu;
      std::vector<uint16_t> converted;
      double expSum;
    };
    std::vector<Results> results;
    for (const VectorKernels* k : supportedVectorKernels()) {
      Results r;
      r.dot = k->dotF16(a.data(), bHalf.data(), n);
      QVERIFY(std::abs(r.dot - refDot) <= 1e-5 * (1 + std::sqrt(double(n))));
      r.dot64 = k->dotF16Lanes64(a.data(), bHalf.data(), n);
      QVERIFY(std::abs(r.dot64 - refDot) <= 1e-5 * (1 + std::sqrt(double(n))));
      r.axpy = a;
      k->axpyF16(-2.0f, bHalf.data(), r.axpy.data(), n);
      std::vector<double> expected(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i)
        expected[size_t(i)] = a[size_t(i)] - 2.0 * double(float(_Float16(b[size_t(i)])));
      compareClose(r.axpy.data(), expected, 1e-6, 1e-6);
      r.converted.resize(size_t(n));
      k->toF16(b.data(), r.converted.data(), n);
      QVERIFY(r.converted == bHalf);
      r.exps = scores;
      r.expSum = k->expChunks(r.exps.data(), chunks, maxScore);
      double refSum = 0;
      for (size_t i = 0; i < scores.size(); ++i) {
        const double e = std::exp(double(scores[i] - maxScore));  // the float difference
        refSum += e;
        QVERIFY2(std::abs(r.exps[i] - e) <= 3e-7 * e + 1e-38, qPrintable(QString::number(i)));
      }
      QVERIFY(std::abs(r.expSum - refSum) <= 1e-6 * refSum);
      r.silu.resize(size_t(n));
      k->siluGlu(b.data(), a.data(), r.silu.data(), n);
      r.halves = b;
      k->scaleToHalf(r.halves.data(), n, 0.37f);
      for (int i = 0; i < n; ++i)
        QCOMPARE(r.halves[size_t(i)], float(_Float16(b[size_t(i)] * 0.37f)));
      results.push_back(std::move(r));
    }
    const Results& scalar = results[0];
    for (size_t t = 1; t < results.size(); ++t) {
      const Results& best = results[t];
      QCOMPARE(std::bit_cast<uint32_t>(best.dot), std::bit_cast<uint32_t>(scalar.dot));
      QCOMPARE(std::bit_cast<uint32_t>(best.dot64), std::bit_cast<uint32_t>(scalar.dot64));
      QCOMPARE(std::memcmp(best.axpy.data(), scalar.axpy.data(), sizeof(float) * size_t(n)), 0);
      QCOMPARE(std::memcmp(best.exps.data(), scalar.exps.data(), sizeof(float) * scores.size()), 0);
      QCOMPARE(best.expSum, scalar.expSum);
      QCOMPARE(std::memcmp(best.silu.data(), scalar.silu.data(), sizeof(float) * size_t(n)), 0);
    }
  }

  void dotRowsMatchesOneDotPerRow_data() {
    QTest::addColumn<int>("n");
    for (int n : {19, 64, 128, 256}) QTest::addRow("n=%d", n) << n;
  }

  void dotRowsMatchesOneDotPerRow() {
    // The batched kernel against the one-row kernels, bit for bit, in both orders and on every
    // kernel table (each is one attention may use).
    QFETCH(int, n);
    std::mt19937 rng{uint32_t(n) + 99};
    std::vector<float> q = randomVector(rng, size_t(n));
    roundToHalfPrecision(q.data(), n);
    const int rows = 5;
    std::vector<uint16_t> keys(size_t(rows * n));
    scalarVectorKernels().toF16(randomVector(rng, keys.size()).data(), keys.data(),
                                int64_t(keys.size()));
    for (const VectorKernels* k : supportedVectorKernels())
      for (bool lanes64 : {false, true}) {
        std::vector<float> out(static_cast<size_t>(rows));
        k->dotRows(q.data(), keys.data(), rows, n, 0.125f, lanes64, out.data());
        for (int r = 0; r < rows; ++r) {
          const uint16_t* row = keys.data() + r * n;
          const float one = (lanes64 ? scalarVectorKernels().dotF16Lanes64(q.data(), row, n)
                                     : scalarVectorKernels().dotF16(q.data(), row, n)) *
                            0.125f;
          QCOMPARE(std::bit_cast<uint32_t>(out[size_t(r)]), std::bit_cast<uint32_t>(one));
        }
      }
  }

  void expPolynomialMatchesExp_data() {
    QTest::addColumn<float>("x");
    for (float x : {0.0f, -1e-8f, -0.5f, -1.0f, -10.0f, -87.0f, -100.0f, -103.0f, -104.0f, 1.0f,
                    20.0f, 88.0f})
      QTest::addRow("%g", double(x)) << x;
  }

  void expPolynomialMatchesExp() {
    // Within 1.5 ulp of e^x (the routine's stated bound) where the result is a normal float.
    QFETCH(float, x);
    const double expected = std::exp(double(x));
    const float actual = expfPolynomial(x);
    if (expected < 1.2e-38) {
      QVERIFY(actual < 2e-38f);
      return;
    }
    const double ulp = double(std::nextafter(float(expected), INFINITY)) - double(float(expected));
    QVERIFY2(std::abs(actual - expected) <= 1.5 * ulp,
             qPrintable(QString::number(double(actual), 'g', 9)));
    QCOMPARE(expfPolynomial(-INFINITY), 0.0f);
  }

  void attentionOverScatteredBlocks_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("positions");  // keys in the cache; the query is at positions - 1
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("window");  // 0: causal over everything
    QTest::addColumn<StepKind>("step");
    for (StepKind step : {StepKind::OneToken, StepKind::SeveralTokens}) {
      const char* kind = step == StepKind::OneToken ? "one-token step" : "prompt step";
      QTest::addRow("one position, %s", kind) << 16 << 1 << 64 << 64 << 0 << step;
      QTest::addRow("111 positions, block 7, dims 19/13, %s", kind)
          << 7 << 111 << 19 << 13 << 0 << step;
      QTest::addRow("989 positions, block 16, dim 64, %s", kind)
          << 16 << 989 << 64 << 64 << 0 << step;
      QTest::addRow("block boundary 32, dim 256, %s", kind) << 16 << 32 << 256 << 256 << 0 << step;
      QTest::addRow("window 37 over 111, block 7, %s", kind) << 7 << 111 << 19 << 13 << 37 << step;
      QTest::addRow("window larger than history, %s", kind) << 5 << 23 << 8 << 8 << 512 << step;
    }
  }

  void attentionOverScatteredBlocks() {
    QFETCH(int, blockSize);
    QFETCH(int, positions);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, window);
    QFETCH(StepKind, step);
    const int kvHeads = 3;
    const int blocksUsed = (positions + blockSize - 1) / blockSize;
    const int blockCount = blocksUsed + 5;  // a pool larger than the sequence needs
    std::mt19937 rng(uint32_t(positions * 31 + headDim));

    // A scattered block table: a random permutation of the pool's blocks.
    std::vector<int32_t> pool(static_cast<size_t>(blockCount));
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    const std::vector<int32_t> table(pool.begin(), pool.begin() + blocksUsed);

    // Unwritten slots hold NaN (0x7e00), so reading one would poison the result.
    std::vector<uint16_t> keyStore(size_t(blockCount) * kvHeads * blockSize * headDim, 0x7e00);
    std::vector<uint16_t> valueStore(size_t(blockCount) * kvHeads * blockSize * valueDim, 0x7e00);
    KvLayerView kv{keyStore.data(), valueStore.data(), blockCount, blockSize,
                   kvHeads,         headDim,           valueDim};
    // Contiguous copies for the reference: keys (positions, kvHeads, headDim).
    const std::vector<float> keys = randomVector(rng, size_t(positions) * kvHeads * headDim);
    const std::vector<float> values = randomVector(rng, size_t(positions) * kvHeads * valueDim);
    for (int p = 0; p < positions; ++p)
      storeKv(kv, table, p, keys.data() + size_t(p) * kvHeads * headDim,
              values.data() + size_t(p) * kvHeads * valueDim);

    const float scale = 1.0f / std::sqrt(float(headDim));
    const int last = positions - 1;
    const int first = window > 0 ? std::max(0, last - window + 1) : 0;
    std::vector<float> scratch(size_t(attentionScratchFloats(positions, valueDim)));
    std::vector<float> out(static_cast<size_t>(valueDim));
    for (int head = 0; head < kvHeads; ++head) {
      std::vector<float> q = randomVector(rng, size_t(headDim), 2.0f);
      roundToHalfPrecision(q.data(), headDim);
      attendHead(q.data(), kv, table, head, first, last, scale, step, scratch.data(), out.data());
      const auto half = [](float x) { return double(float(_Float16(x))); };

      std::vector<double> logits;
      for (int p = first; p <= last; ++p) {
        double s = 0;
        for (int d = 0; d < headDim; ++d)
          s += double(q[size_t(d)]) * half(keys[(size_t(p) * kvHeads + head) * headDim + d]);
        logits.push_back(s * scale);
      }
      const double maxLogit = *std::max_element(logits.begin(), logits.end());
      double sum = 0;
      for (double& l : logits) sum += (l = std::exp(l - maxLogit));
      std::vector<double> expected(size_t(valueDim), 0.0);
      for (int p = first; p <= last; ++p)
        for (int d = 0; d < valueDim; ++d)
          expected[size_t(d)] += half(float(logits[size_t(p - first)] / sum)) *
                                 half(values[(size_t(p) * kvHeads + head) * valueDim + d]);
      // The weights are rounded to fp16 from float here and from double in the reference: one
      // fp16 step (2^-11 relative) may separate them.
      compareClose(out.data(), expected, 1e-4, 1e-3);
    }
  }
  void tiledAttentionMatchesPerQuery_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("positions");  // keys in the cache
    QTest::addColumn<int>("tileStart");  // the tile's first token's position
    QTest::addColumn<int>("tileTokens");
    QTest::addColumn<int>("group");  // query heads per kv head
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("valueDim");
    QTest::addColumn<int>("window");        // 0: causal over everything
    QTest::addColumn<float>("queryScale");  // large: peaked softmax, many weights round to 0
    QTest::addColumn<StepKind>("step");
    for (StepKind step : {StepKind::OneToken, StepKind::SeveralTokens}) {
      const char* kind = step == StepKind::OneToken ? "one-token order" : "prompt order";
      QTest::addRow("1 token, group 3, dim 64, block 16, %s", kind)
          << 16 << 300 << 299 << 1 << 3 << 64 << 64 << 0 << 2.0f << step;
      QTest::addRow("8 tokens, group 3, dim 64, block 16, %s", kind)
          << 16 << 1000 << 992 << 8 << 3 << 64 << 64 << 0 << 2.0f << step;
      QTest::addRow("8 tokens from position 0, group 1, %s", kind)
          << 16 << 40 << 0 << 8 << 1 << 64 << 64 << 0 << 2.0f << step;
      QTest::addRow("5 tokens mid-cache, group 4, dim 128, block 7, %s", kind)
          << 7 << 200 << 101 << 5 << 4 << 128 << 128 << 0 << 2.0f << step;
      QTest::addRow("4 tokens, group 4, dim 256, block 16, %s", kind)
          << 16 << 90 << 70 << 4 << 4 << 256 << 256 << 0 << 2.0f << step;
      QTest::addRow("6 tokens, group 3, dims 19/13, block 7, %s", kind)
          << 7 << 111 << 105 << 6 << 3 << 19 << 13 << 0 << 2.0f << step;
      QTest::addRow("8 tokens, window 37, group 4, block 7, %s", kind)
          << 7 << 150 << 120 << 8 << 4 << 64 << 64 << 37 << 2.0f << step;
      QTest::addRow("8 tokens, window 5 < tile, group 3, block 16, %s", kind)
          << 16 << 64 << 50 << 8 << 3 << 64 << 64 << 5 << 2.0f << step;
      QTest::addRow("3 tokens, peaked softmax, group 3, block 16, %s", kind)
          << 16 << 500 << 400 << 3 << 3 << 64 << 64 << 0 << 40.0f << step;
      QTest::addRow("8 tokens x group 8 = 64 queries, block 7, %s", kind)
          << 7 << 77 << 69 << 8 << 8 << 64 << 64 << 0 << 2.0f << step;
      // One token's heads see the same positions: the one-pass value sums of the one-token
      // order, over more rows than one value batch of the lane way (512), from a first lane that
      // is not 0 (a window), with many zero weights, and past the one-pass limit (2048 rows).
      QTest::addRow("1 token at 1499, group 3, dim 64, block 16, %s", kind)
          << 16 << 1500 << 1499 << 1 << 3 << 64 << 64 << 0 << 2.0f << step;
      QTest::addRow("1 token, window 37, group 4, dim 128, block 7, %s", kind)
          << 7 << 150 << 149 << 1 << 4 << 128 << 128 << 37 << 2.0f << step;
      QTest::addRow("1 token, peaked softmax, group 4, dim 256, block 16, %s", kind)
          << 16 << 700 << 699 << 1 << 4 << 256 << 256 << 0 << 40.0f << step;
      QTest::addRow("1 token at 2999, group 2, dim 64, block 16, %s", kind)
          << 16 << 3000 << 2999 << 1 << 2 << 64 << 64 << 0 << 2.0f << step;
    }
  }

  void tiledAttentionMatchesPerQuery() {
    // attendHeads against attendHead, query by query, bit for bit: the tile only shares the reads
    // of K and V, each query's arithmetic must be the per-query path's.
    QFETCH(int, blockSize);
    QFETCH(int, positions);
    QFETCH(int, tileStart);
    QFETCH(int, tileTokens);
    QFETCH(int, group);
    QFETCH(int, headDim);
    QFETCH(int, valueDim);
    QFETCH(int, window);
    QFETCH(float, queryScale);
    QFETCH(StepKind, step);
    const int kvHeads = 2;
    const int blocksUsed = (positions + blockSize - 1) / blockSize;
    const int blockCount = blocksUsed + 3;
    std::mt19937 rng(uint32_t(positions * 7 + tileTokens * 131 + group));
    std::vector<int32_t> pool(static_cast<size_t>(blockCount));
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), rng);
    const std::vector<int32_t> table(pool.begin(), pool.begin() + blocksUsed);
    // Unwritten slots hold NaN (0x7e00), so reading one would poison the result.
    std::vector<uint16_t> keyStore(size_t(blockCount) * kvHeads * blockSize * headDim, 0x7e00);
    std::vector<uint16_t> valueStore(size_t(blockCount) * kvHeads * blockSize * valueDim, 0x7e00);
    KvLayerView kv{keyStore.data(), valueStore.data(), blockCount, blockSize,
                   kvHeads,         headDim,           valueDim};
    for (int p = 0; p < positions; ++p)
      storeKv(kv, table, p, randomVector(rng, size_t(kvHeads) * headDim).data(),
              randomVector(rng, size_t(kvHeads) * valueDim).data());

    const float scale = 1.0f / std::sqrt(float(headDim));
    const int queryCount = tileTokens * group;
    for (int kvHead = 0; kvHead < kvHeads; ++kvHead) {
      // queries (tileTokens, group, headDim), token t at position tileStart + t
      std::vector<float> q = randomVector(rng, size_t(queryCount) * headDim, queryScale);
      roundToHalfPrecision(q.data(), int64_t(q.size()));
      std::vector<float> tiled(size_t(queryCount) * valueDim, -1.0f);
      std::vector<AttentionQuery> queries;
      int minFirst = tileStart, maxLast = 0;
      for (int t = 0; t < tileTokens; ++t)
        for (int h = 0; h < group; ++h) {
          const int last = tileStart + t;
          const int first = window > 0 ? std::max(0, last - window + 1) : 0;
          const int i = t * group + h;
          queries.push_back(
              {q.data() + size_t(i) * headDim, first, last, tiled.data() + size_t(i) * valueDim});
          minFirst = std::min(minFirst, first);
          maxLast = std::max(maxLast, last);
        }
      // Exactly the stated scratch, NaN-filled (a read before a write poisons the result), and a
      // guard after it that must stay untouched.
      const int64_t scratchFloats =
          attentionTileScratchFloats(queryCount, maxLast - minFirst + 1, valueDim);
      std::vector<float> scratch(size_t(scratchFloats) + 64, NAN);
      std::fill(scratch.end() - 64, scratch.end(), 1234.0f);
      attendHeads(queries, kv, table, kvHead, scale, step, scratch.data());
      QVERIFY(std::all_of(scratch.end() - 64, scratch.end(), [](float x) { return x == 1234.0f; }));

      std::vector<float> single(size_t(attentionScratchFloats(positions, valueDim)));
      std::vector<float> expected(static_cast<size_t>(valueDim));
      for (int i = 0; i < queryCount; ++i) {
        const AttentionQuery& query = queries[size_t(i)];
        attendHead(query.q, kv, table, kvHead, query.first, query.last, scale, step, single.data(),
                   expected.data());
        QVERIFY2(std::memcmp(expected.data(), query.out, sizeof(float) * size_t(valueDim)) == 0,
                 qPrintable(
                     QString("query %1 (token %2, head %3)").arg(i).arg(i / group).arg(i % group)));
      }
    }
  }

  void multiQueryKernelsMatchOneQuery_data() {
    QTest::addColumn<int>("n");
    // 192: a width of 64s that is not one of 128s (the AVX-512 value kernel's column step is 64).
    for (int n : {13, 64, 128, 192, 256}) QTest::addRow("n=%d", n) << n;
  }

  void multiQueryKernelsMatchOneQuery() {
    // dotRowsMulti / accumulateRowsMulti against dotRows / accumulateRows query by query, bit for
    // bit, on every kernel table, in both orders and with 16 and 64 lanes; more rows than lanes and
    // than one conversion batch (the value kernel keeps a lane row loaded across its rows).
    QFETCH(int, n);
    std::mt19937 rng{uint32_t(n) + 7};
    // 2100 rows: more than one 2048-row batch of the AVX-512 value kernel at n = 64; 7 queries: its
    // groups of 4 and 3.
    const int rows = 2100, queries = 7;
    std::vector<uint16_t> data(size_t(rows * n));
    scalarVectorKernels().toF16(randomVector(rng, data.size()).data(), data.data(),
                                int64_t(data.size()));
    std::vector<float> q = randomVector(rng, size_t(queries * n));
    roundToHalfPrecision(q.data(), int64_t(q.size()));
    std::vector<float> weights = randomVector(rng, size_t(queries * rows));
    for (size_t i = 0; i < weights.size(); i += 3) weights[i] = 0.0f;  // skipped rows
    for (const VectorKernels* k : supportedVectorKernels())
      for (bool lanes64 : {false, true}) {
        std::vector<float> multi(static_cast<size_t>(queries * rows)),
            one(static_cast<size_t>(rows));
        std::vector<const float*> qs;
        std::vector<float*> outs;
        for (int j = 0; j < queries; ++j) {
          qs.push_back(q.data() + j * n);
          outs.push_back(multi.data() + j * rows);
        }
        k->dotRowsMulti(qs.data(), queries, data.data(), rows, n, 0.3f, lanes64, outs.data());
        for (int j = 0; j < queries; ++j) {
          k->dotRows(qs[size_t(j)], data.data(), rows, n, 0.3f, lanes64, one.data());
          QCOMPARE(std::memcmp(one.data(), outs[size_t(j)], sizeof(float) * rows), 0);
        }
      }
    for (const VectorKernels* k : supportedVectorKernels())
      for (int laneCount : {16, 64}) {
        const std::vector<float> start = randomVector(rng, size_t(queries * laneCount * n));
        std::vector<float> multi = start;
        std::vector<const float*> ws;
        std::vector<float*> lanes;
        for (int j = 0; j < queries; ++j) {
          ws.push_back(weights.data() + j * rows);
          lanes.push_back(multi.data() + size_t(j) * laneCount * n);
        }
        std::vector<const uint16_t*> rowPointers;
        for (int i = 0; i < rows; ++i) rowPointers.push_back(data.data() + i * n);
        k->accumulateRowsMulti(ws.data(), lanes.data(), queries, rowPointers.data(), rows, n,
                               laneCount, 11);
        for (int j = 0; j < queries; ++j) {
          std::vector<float> one(start.begin() + j * laneCount * n,
                                 start.begin() + (j + 1) * laneCount * n);
          k->accumulateRows(ws[size_t(j)], data.data(), rows, n, one.data(), laneCount, 11);
          QCOMPARE(std::memcmp(one.data(), lanes[size_t(j)], sizeof(float) * one.size()), 0);
        }
      }
  }

  void maxValueMatchesStdMax_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("withNan");
    for (int n : {0, 5, 16, 37, 300})
      for (bool withNan : {false, true})
        QTest::addRow("n=%d nan=%d", n, int(withNan)) << n << withNan;
  }

  void maxValueMatchesStdMax() {
    // Every kernel table against std::max folded left to right from -inf (attendHead's loop before
    // the kernel), bit for bit: NaNs skipped, -inf masked scores, the maximum anywhere in the run.
    QFETCH(int, n);
    QFETCH(bool, withNan);
    std::mt19937 rng{uint32_t(n) + 3};
    std::vector<float> x = randomVector(rng, size_t(n), 8.0f);
    for (int i = 0; i < n; i += 7) x[size_t(i)] = -std::numeric_limits<float>::infinity();
    if (withNan)
      for (int i = 3; i < n; i += 11) x[size_t(i)] = std::numeric_limits<float>::quiet_NaN();
    float expected = -std::numeric_limits<float>::infinity();
    for (float v : x) expected = std::max(expected, v);
    for (const VectorKernels* k : supportedVectorKernels()) {
      const float got = k->maxValue(x.data(), n, -std::numeric_limits<float>::infinity());
      QCOMPARE(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected));
    }
  }
};

QTEST_APPLESS_MAIN(TestAttentionOps)
#include "test_attention_ops.moc"
