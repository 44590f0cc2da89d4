#pragma once
// The gated activations of the feed-forward block, one token's row at a time, computed as
// llama.cpp's CPU backend computes them (so that the next layer's 8-bit quantization of the
// activations sees the same floats):
//  - SwiGLU: silu(g) * u with silu(g) = g / (1 + e^-g), e^-g by expfPolynomial for each whole
//    16-element chunk of the row and by the C library's expf for the remainder;
//  - GeGLU: gelu(g) * u with gelu looked up in a table of fp16 values indexed by fp16(g)
//    (llama.cpp's GGML_GELU_FP16), 0 below -10 and g above 10.
#include <cstdint>

namespace ember::cpu::ops {

// GELU with the tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), the inner
// 1 + 0.044715 x^2 rounded once (as llama.cpp's compiled ggml_gelu_f32 has it).
float geluTanh(float x);

// out (n) = silu(gate) * up; out may alias gate or up.
void siluGluRow(const float* gate, const float* up, float* out, int64_t n);
// out (n) = gelu(gate) * up; out may alias gate or up.
void geluTanhGluRow(const float* gate, const float* up, float* out, int64_t n);
// out = g * sigmoid(1.702 g) * (u + 1) with g = min(gate, 7), u = clamp(up, -7, 7): gpt-oss's
// SwiGLU, computed as ggml's swiglu_oai (g / (1 + exp(-1.702 g)), all in float). out may be gate.
void swigluOaiRow(const float* gate, const float* up, float* out, int64_t n);

// Final-logit soft-capping: x = cap * tanh(x / cap).
void softcap(float* x, int64_t n, float cap);

}  // namespace ember::cpu::ops
