// GeGLU's activation row (ops::geluTanhGluRow): the SIMD table lookup against the scalar one and
// against llama.cpp's definition (GGML_GELU_FP16 in ggml-cpu/vec.h: 0 at or below -10, x at or
// above 10, else the fp16 table of gelu indexed by fp16(x), times up), bit for bit.
// Inputs: every fp16 value (subnormals, infinities, NaNs included), floats between them (the
// rounding to the index), the thresholds and their neighbours, rows whose length is not a
// multiple of the vector width, and out aliasing gate.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/ops/activations.h"
#include "backend/cpu/ops/vector_math.h"
#include "gguf/fp16.h"

using namespace ember;

namespace {

float definition(float g, float u) {
  if (g <= -10.0f) return 0.0f;
  if (g >= 10.0f) return g * u;
  const float gh = gguf::fp16ToFloat(gguf::floatToFp16(g));
  return gguf::fp16ToFloat(gguf::floatToFp16(cpu::ops::geluTanh(gh))) * u;
}

bool sameBits(float a, float b) {
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y || (std::isnan(a) && std::isnan(b));
}

std::vector<float> gates() {
  std::vector<float> g;
  for (uint32_t bits = 0; bits < 65536; ++bits) g.push_back(gguf::fp16ToFloat(uint16_t(bits)));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
  for (int i = 0; i < 20000; ++i) g.push_back(wide(rng));
  for (float t : {-10.0f, 10.0f}) {
    g.push_back(t);
    g.push_back(std::nextafter(t, 0.0f));
    g.push_back(std::nextafter(t, 2 * t));
  }
  g.push_back(0.0f);  // 3 left over after whole vectors of 8
  return g;
}

}  // namespace

class TestCpuGeluGlu : public QObject {
  Q_OBJECT

 private slots:
  void rowMatchesDefinition() {
    const std::vector<float> g = gates();
    std::vector<float> u(g.size());
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (float& v : u) v = normal(rng);
    std::vector<float> out(g.size());
    cpu::ops::geluTanhGluRow(g.data(), u.data(), out.data(), int64_t(g.size()));
    for (size_t i = 0; i < g.size(); ++i)
      if (!sameBits(out[i], definition(g[i], u[i])))
        QFAIL(qPrintable(QStringLiteral("gate %1 up %2: %3, definition %4")
                             .arg(double(g[i]), 0, 'g', 9).arg(double(u[i]))
                             .arg(double(out[i]), 0, 'g', 9)
                             .arg(double(definition(g[i], u[i])), 0, 'g', 9)));
    // In place (out = gate), as the FFN calls it.
    std::vector<float> inPlace = g;
    cpu::ops::geluTanhGluRow(inPlace.data(), u.data(), inPlace.data(), int64_t(g.size()));
    for (size_t i = 0; i < g.size(); ++i) QVERIFY(sameBits(inPlace[i], out[i]));
  }

  void simdEqualsScalar() {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
      QSKIP("the CPU has no AVX2 + FMA + F16C");
    // The table as activations.cpp builds it, with its padding.
    std::vector<uint16_t> table(cpu::ops::kGeluTableEntries, 0);
    for (uint32_t bits = 0; bits < 65536; ++bits)
      table[bits] = gguf::floatToFp16(cpu::ops::geluTanh(gguf::fp16ToFloat(uint16_t(bits))));
    const std::vector<float> g = gates();
    const std::vector<float> u(g.size(), 1.5f);
    for (int64_t n : {int64_t(g.size()), int64_t(7), int64_t(13)}) {
      std::vector<float> a(size_t(n), 0.0f), b(size_t(n), 0.0f);
      cpu::ops::scalarVectorKernels().geluTableGlu(table.data(), g.data(), u.data(), a.data(), n);
      cpu::ops::avx2VectorKernels().geluTableGlu(table.data(), g.data(), u.data(), b.data(), n);
      for (int64_t i = 0; i < n; ++i) QVERIFY(sameBits(a[size_t(i)], b[size_t(i)]));
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuGeluGlu)
#include "test_cpu_gelu_glu.moc"
