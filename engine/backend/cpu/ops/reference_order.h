#pragma once
// Scalar definitions of the float operation orders that llama.cpp's CPU attention uses, so that
// ours rounds identically (SmolLM2 and Gemma amplify a last-bit difference in one attention
// weight into logit differences of 0.1 and more, so "close" is not close enough):
//  - sums over 16 lanes: when a step has several tokens, llama.cpp's products with the fp16 KV
//    cache (tinyBLAS, KN = 16) keep 16 float partial sums, lane l taking elements l, l+16, l+32,
//    ... in order, and add the lanes pairwise as _mm512_reduce_add_ps does: (i, i+8), then
//    (i, i+4), then (i, i+2), then (0, 1);
//  - sums over 64 lanes: with one token in the step llama.cpp uses ggml_vec_dot_f16 instead,
//    whose 4 accumulators of 16 lanes take elements e with lane e % 64 (sumLanes64);
//  - exp in the softmax: the polynomial of ARM's optimized-routines expf, as llama.cpp's
//    vectorised ggml_v_expf evaluates it (FMA at each step), not the C library's expf.
// The SIMD kernels in vector_math_avx2.cpp perform exactly these operations.
#include <cmath>
#include <cstdint>
#include <limits>

namespace ember::cpu::ops {

constexpr int kLanes = 16;

// a (16 lanes) summed in the pairwise order above.
inline float sumLanes16(const float* a) {
  float b[8], c[4];
  for (int i = 0; i < 8; ++i) b[i] = a[i] + a[i + 8];
  for (int i = 0; i < 4; ++i) c[i] = b[i] + b[i + 4];
  return (c[0] + c[2]) + (c[1] + c[3]);
}

// a (64 values: 4 groups of 16 lanes) summed as ggml_vec_dot_f16 reduces its 4 accumulators on
// AVX-512 (the one-token path): groups (0, 2) and (1, 3), then (0, 1), then the 16 lanes.
inline float sumLanes64(const float* a) {
  float g[kLanes];
  for (int l = 0; l < kLanes; ++l) g[l] = (a[l] + a[32 + l]) + (a[16 + l] + a[48 + l]);
  return sumLanes16(g);
}

// e^x with the optimized-routines polynomial: x = n ln2 + b with n integral, e^b by a degree-5
// polynomial in b (Estrin scheme), scaled by 2^n. Max error about 1.5 ulp; 0 for x below about
// -103.97 (and -inf), infinity above about 88.38.
inline float expfPolynomial(float x) {
  const float shift = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shift);  // x / ln2, rounded to an integer
  const float n = z - shift;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));  // x - n ln2
  if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : std::numeric_limits<float>::infinity();
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  return std::ldexp(j, static_cast<int>(n));
}

}  // namespace ember::cpu::ops
