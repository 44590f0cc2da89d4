// The repacked kernels on Intel AMX (backend/cpu/repacked_kernels_amx.cpp).
//
// References and bounds:
// - the AVX-512 and scalar fused kernels (repacked_kernels.h, llamaLanes cleared): the same
//   bits (memcmp). The tile unit's block sums are the exact integers the VNNI kernel forms
//   (|I| <= 32 * 255 * 128 < 2^24, so float(I) is exact too) and the float steps per block and
//   token are the same two fused multiply-adds.
// - a double-precision product computed here from the repacked bytes read through the layout
//   repack.h documents (q, f16 d and m) and the quantized activations (int8 q, float d, and the
//   stored s where the type takes f16(dx * S)):
//     y = sum_b d dx_b I_b + m s_b,   I_b = sum_e (q_e - offset) x_e  (integers, exact).
//   The kernel rounds each term once before its fused add (d * dx, or dx * S) and then each of
//   the 2 nb accumulations once, so |y' - y| <= ((1 + u)^(2 nb + 1) - 1) sum_b (|d dx I_b| +
//   |m s_b|), u = 2^-24; the test uses (2 nb + 2) u times that sum.
// - through matmul (the dispatch): several tokens (AMX) give each token the bits it gets alone
//   (1 token: the AVX-512 fused kernel), on 1 and 2 threads.
// Sizes: rows 1, 7, 17, 45 (a lone row, padded groups), 1-18 blocks per row, token counts 1-17
// and 31-33 (tiles of 16 and every remainder). Skipped, with the reason, where AMX is not usable.
#include <QtTest>

#include <cmath>
#include <cstring>

#include "backend/cpu/amx_support.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/repacked_kernels.h"
#include "backend/cpu/thread_pool.h"
#include "cpu_test_support.h"

using namespace ember;
using cpu::SimdLevel;
using gguf::GgmlType;

Q_DECLARE_METATYPE(GgmlType)

namespace {

#define EMBER_REQUIRE_AMX()                                                               \
  do {                                                                                    \
    if (!cpu::amxAvailable())                                                             \
      QSKIP(qPrintable(QStringLiteral("AMX not usable: %1").arg(cpu::amxUnavailableReason()))); \
    if (!cpu::simdLevelSupported(SimdLevel::Avx512Vnni)) QSKIP("the CPU has no AVX-512 VNNI"); \
  } while (false)

std::vector<int64_t> tokenCounts() {
  std::vector<int64_t> n;
  for (int64_t t = 1; t <= 17; ++t) n.push_back(t);
  for (int64_t t = 31; t <= 33; ++t) n.push_back(t);
  return n;
}

// (tokens, stride) Q8x32 activation rows.
struct Activations {
  Activations(int64_t tokens, int64_t cols, uint32_t seed)
      : stride(cpu::quant::activationRowBytes(cpu::quant::ActivationFormat::Q8x32, cols)),
        bytes(size_t(tokens) * stride) {
    const std::vector<float> x = test::randomActivations(tokens * cols, seed);
    const auto prepare = cpu::quant::kernelsFor(GgmlType::Q8_0, SimdLevel::Scalar)->prepare;
    for (int64_t t = 0; t < tokens; ++t)
      prepare(x.data() + t * cols, cols, bytes.data + size_t(t) * stride);
  }
  size_t stride;
  test::AlignedBytes bytes;
};

std::vector<float> run(cpu::RepackedDotFn f, const cpu::RepackedMatrix& m, const Activations& x,
                       int64_t tokens) {
  std::vector<float> y(size_t(tokens * m.rows), -1.0f);
  f({&m, 0, m.groups, x.bytes.data, x.stride, tokens, y.data(), m.rows});
  return y;
}

// q of row r, element e of block b, read through the documented layout.
int quantAt(const cpu::RepackedMatrix& m, int64_t row, int64_t j) {
  const uint8_t* blk = m.block(row / 16, j / 32);
  const int r = int(row % 16), e = int(j % 32);
  if (m.layout == cpu::RepackedLayout::Int8) return int8_t(blk[64 * (e / 4) + 4 * r + e % 4]);
  const int k = (e % 16) / 4, i = e % 4;
  const uint8_t packed = blk[64 * k + 4 * r + i];
  int q = e < 16 ? packed & 15 : packed >> 4;
  if (m.layout == cpu::RepackedLayout::Nibble5) q |= ((blk[256 + 4 * r + i] >> (e / 4)) & 1) << 4;
  return q - m.quantOffset;
}

void addTypeRows() {
  QTest::addColumn<GgmlType>("type");
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                     GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
    QTest::newRow(std::string(gguf::ggmlTypeName(t)).c_str()) << t;
}

bool isKQuant(GgmlType t) {
  return t == GgmlType::Q4_K || t == GgmlType::Q5_K || t == GgmlType::Q6_K;
}

}  // namespace

class TestCpuAmxKernels : public QObject {
  Q_OBJECT

 private slots:
  void amxGivesTheFusedKernelsBits_data() { addTypeRows(); }
  void amxGivesTheFusedKernelsBits() {
    EMBER_REQUIRE_AMX();
    QFETCH(GgmlType, type);
    cpu::ThreadPool pool(1);
    const std::vector<int64_t> colsList =
        isKQuant(type) ? std::vector<int64_t>{256, 512} : std::vector<int64_t>{32, 160, 576};
    for (int64_t rows : {1, 7, 17, 45})
      for (int64_t cols : colsList) {
        test::OwnedMatrix src = test::randomMatrix(type, rows, cols, uint32_t(rows * 31 + cols));
        const auto packed = cpu::repackMatrix(src.view, pool);
        QVERIFY(packed != nullptr);
        packed->llamaLanes = false;
        const cpu::RepackedDotFn amx = cpu::repackedKernelAmx(*packed);
        const cpu::RepackedDotFn avx512 = cpu::repackedKernelAvx512(*packed);
        const cpu::RepackedDotFn scalar = cpu::repackedKernelScalar(*packed);
        QVERIFY(amx != nullptr && avx512 != nullptr && scalar != nullptr);
        for (int64_t tokens : tokenCounts()) {
          const Activations x(tokens, cols, uint32_t(tokens + 7 * rows));
          const std::vector<float> a = run(amx, *packed, x, tokens);
          const std::vector<float> v = run(avx512, *packed, x, tokens);
          const std::vector<float> s = run(scalar, *packed, x, tokens);
          const QString what = QStringLiteral("%1 x %2, %3 tokens").arg(rows).arg(cols).arg(tokens);
          QVERIFY2(std::memcmp(a.data(), v.data(), a.size() * 4) == 0,
                   qPrintable(what + ": AMX != AVX-512 fused"));
          QVERIFY2(std::memcmp(a.data(), s.data(), a.size() * 4) == 0,
                   qPrintable(what + ": AMX != scalar fused"));
        }
      }
  }

  void amxWithinTheFloatBoundOfADoubleProduct_data() { addTypeRows(); }
  void amxWithinTheFloatBoundOfADoubleProduct() {
    EMBER_REQUIRE_AMX();
    QFETCH(GgmlType, type);
    cpu::ThreadPool pool(1);
    const int64_t rows = 45, cols = isKQuant(type) ? 768 : 576, nb = cols / 32;
    test::OwnedMatrix src = test::randomMatrix(type, rows, cols, 1234);
    const auto packed = cpu::repackMatrix(src.view, pool);
    packed->llamaLanes = false;
    const cpu::RepackedDotFn amx = cpu::repackedKernelAmx(*packed);
    QVERIFY(amx != nullptr);
    double worst = 0;
    for (int64_t tokens : {int64_t(1), int64_t(5), int64_t(16), int64_t(33)}) {
      const Activations x(tokens, cols, uint32_t(99 + tokens));
      const std::vector<float> y = run(amx, *packed, x, tokens);
      for (int64_t t = 0; t < tokens; ++t) {
        const auto xr = cpu::quant::q8x32Row(x.bytes.data + size_t(t) * x.stride, cols);
        for (int64_t r = 0; r < rows; ++r) {
          double want = 0, magnitude = 0;
          for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = packed->block(r / 16, b);
            const double d = cpu::quant::fp16ToFloat(
                cpu::quant::loadU16(blk + packed->quantBytes + 2 * (r % 16)));
            const double m = cpu::quant::fp16ToFloat(packed->minBits(blk, int(r % 16)));
            int64_t dot = 0, sum = 0;
            for (int64_t e = 0; e < 32; ++e) {
              dot += int64_t(quantAt(*packed, r, 32 * b + e)) * xr.qs[32 * b + e];
              sum += xr.qs[32 * b + e];
            }
            QCOMPARE(int64_t(xr.sum[b]), sum);
            const double s = packed->roundedMinSum ? double(xr.s[b]) : double(xr.d[b]) * double(sum);
            const double termI = d * double(xr.d[b]) * double(dot), termM = m * s;
            want += termI + termM;
            magnitude += std::fabs(termI) + std::fabs(termM);
          }
          const double bound = double(2 * nb + 2) * 0x1p-24 * magnitude;
          const double diff = std::fabs(double(y[size_t(t * rows + r)]) - want);
          if (magnitude > 0) worst = std::max(worst, diff / magnitude);
          if (!(diff <= bound))
            QFAIL(qPrintable(QStringLiteral("%1 tokens, token %2 row %3: AMX %4, double %5, bound %6")
                                 .arg(tokens).arg(t).arg(r).arg(y[size_t(t * rows + r)])
                                 .arg(want).arg(bound)));
        }
      }
    }
    qInfo("worst |error| / sum |terms|: %.3g (bound %.3g)", worst, double(2 * nb + 2) * 0x1p-24);
  }

  // matmul's dispatch: a product of several tokens (AMX) gives every token its bits alone.
  void severalTokensGiveEachTokenItsBitsAlone_data() { addTypeRows(); }
  void severalTokensGiveEachTokenItsBitsAlone() {
    EMBER_REQUIRE_AMX();
    QFETCH(GgmlType, type);
    QVERIFY(cpu::amxRepackedKernels());
    const int64_t rows = 45, cols = isKQuant(type) ? 512 : 576;
    cpu::ThreadPool pool1(1), pool2(2);
    test::OwnedMatrix src = test::randomMatrix(type, rows, cols, 4321);
    const auto packed = cpu::repackMatrix(src.view, pool2);
    packed->llamaLanes = false;
    cpu::WeightMatrix fast = src.view;
    fast.repacked = packed.get();
    cpu::MatmulScratch scratch;
    for (int64_t tokens : tokenCounts()) {
      const std::vector<float> x = test::randomActivations(tokens * cols, uint32_t(500 + tokens));
      for (cpu::ThreadPool* pool : {&pool1, &pool2}) {
        std::vector<float> together(size_t(tokens * rows));
        cpu::matmul(*pool, fast, x.data(), tokens, together.data(), scratch);
        for (int64_t t = 0; t < tokens; ++t) {
          std::vector<float> alone(static_cast<size_t>(rows));
          cpu::matmul(*pool, fast, x.data() + t * cols, 1, alone.data(), scratch);
          QVERIFY2(std::memcmp(alone.data(), together.data() + t * rows, size_t(rows) * 4) == 0,
                   qPrintable(QStringLiteral("%1 tokens, token %2, %3 threads")
                                  .arg(tokens).arg(t).arg(pool->size())));
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestCpuAmxKernels)
#include "test_cpu_amx_kernels.moc"
