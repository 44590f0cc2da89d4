#pragma once
// The AVX-512 VNNI kernel on NibbleK (lossless Q4_K, repack.h) against Q8xK activation rows, in
// the reference kernels' float order (repacked_kernels.h), so it gives their bits. The 16 rows
// of a group are the 16 lanes of a vector: per sub-block, 8 vpdpbusd against the broadcast
// activation quads give the 16 rows' exact dot products, vpmulld weights them by the rows'
// scales, and one vpdpwssd of the rows' (min, min) pairs against the activation's pair of
// 32-element sums gives a chunk's min term. The unpacked weights of a sub-block serve the
// tokens of a tile (up to kNibbleKTile) while they are in registers. Included by
// x86_repacked_kernels.h in the AVX-512 build only.

namespace ember::cpu {
namespace {

constexpr int kNibbleKTile = 4;

// kGrouped: llama.cpp's order for tokens run in groups of 4 (a float step per chunk of 64
// elements); otherwise its one-token order (one per super-block).
template <bool kGrouped, int T>
void nibbleKTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
                 int64_t yStride) {
  quant::Q8xKRow xr[T];
  for (int t = 0; t < T; ++t) xr[t] = quant::q8xKRow(x + size_t(t) * xStride, m.cols);
  __m512 acc[T], accMin[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps(), accMin[t] = _mm512_setzero_ps();
  const __m512i lowNibble = _mm512_set1_epi8(0x0f);
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* blk = m.block(g, b);
    prefetchBlock(blk + 2 * kNibbleKBytes, kNibbleKBytes);
    alignas(16) int32_t bsumPairs[T][4];  // int16 pairs: (bsum32 of sub-block 2c, of 2c + 1)
    __m512 scale[T], scaleMin[T];
    __m512i sumAll[T], minAll[T];
    const __m512 d = _mm512_cvtph_ps(quant::load256(blk + kNibbleKD));
    const __m512 dmin = _mm512_cvtph_ps(quant::load256(blk + kNibbleKDmin));
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const int16_t* bs = xr[t].bsums + 16 * b;
      _mm_store_si128(reinterpret_cast<__m128i*>(bsumPairs[t]),
                      _mm_hadd_epi16(quant::load128(bs), quant::load128(bs + 8)));
      const __m512 xd = _mm512_set1_ps(xr[t].d[b]);
      scale[t] = _mm512_mul_ps(d, xd);
      scaleMin[t] = _mm512_mul_ps(dmin, xd);
      sumAll[t] = zero, minAll[t] = zero;
    }
#pragma GCC unroll 1
    for (int c = 0; c < 4; ++c) {
      const uint8_t* packed = blk + 64 * 8 * c;
      __m512i chunk[T];
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {  // sub-block 2c + h: the low (h = 0) or high nibbles
        __m512i w[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          const __m512i v = _mm512_load_si512(packed + 64 * k);
          w[k] = _mm512_and_si512(h ? _mm512_srli_epi16(v, 4) : v, lowNibble);
        }
        const __m512i sc =
            _mm512_cvtepu8_epi32(quant::load128(blk + kNibbleKScales + 16 * (2 * c + h)));
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const int8_t* xq = xr[t].qs + 256 * b + 64 * c + 32 * h;
          __m512i even = zero, odd = zero;
#pragma GCC unroll 4
          for (int k = 0; k < 8; k += 2) {
            even = _mm512_dpbusd_epi32(even, w[k], _mm512_set1_epi32(loadQuad(xq + 4 * k)));
            odd = _mm512_dpbusd_epi32(odd, w[k + 1], _mm512_set1_epi32(loadQuad(xq + 4 * k + 4)));
          }
          const __m512i weighted = _mm512_mullo_epi32(_mm512_add_epi32(even, odd), sc);
          chunk[t] = h ? _mm512_add_epi32(chunk[t], weighted) : weighted;
        }
      }
      const __m512i mins = _mm512_cvtepu8_epi16(quant::load256(blk + kNibbleKMins + 32 * c));
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const __m512i chunkMin =
            _mm512_dpwssd_epi32(zero, mins, _mm512_set1_epi32(bsumPairs[t][c]));
        if constexpr (kGrouped) {
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(chunk[t]), scale[t], acc[t]);
          accMin[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(chunkMin), scaleMin[t], accMin[t]);
        } else {
          sumAll[t] = _mm512_add_epi32(sumAll[t], chunk[t]);
          minAll[t] = _mm512_add_epi32(minAll[t], chunkMin);
        }
      }
    }
    if constexpr (!kGrouped) {
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumAll[t]), scale[t], acc[t]);
        accMin[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(minAll[t]), scaleMin[t], accMin[t]);
      }
    }
  }
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t)
    _mm512_mask_storeu_ps(y + t * yStride + g * kRepackGroupRows, valid,
                          _mm512_sub_ps(acc[t], accMin[t]));
}

template <bool kGrouped>
void nibbleKTokens(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride,
                   int64_t tokens, float* y, int64_t yStride) {
  int64_t t = 0;
  for (; t + kNibbleKTile <= tokens; t += kNibbleKTile)
    nibbleKTile<kGrouped, kNibbleKTile>(m, g, x + size_t(t) * xStride, xStride, y + t * yStride,
                                        yStride);
  x += size_t(t) * xStride;
  y += t * yStride;
  switch (tokens - t) {
    case 1: nibbleKTile<kGrouped, 1>(m, g, x, xStride, y, yStride); break;
    case 2: nibbleKTile<kGrouped, 2>(m, g, x, xStride, y, yStride); break;
    case 3: nibbleKTile<kGrouped, 3>(m, g, x, xStride, y, yStride); break;
    default: break;
  }
}

void runNibbleK(const RepackedTask& task) {
  const int64_t grouped = quant::minOf(task.groupedTokens, task.tokens);
  for (int64_t g = task.group0; g < task.group1; ++g) {
    if (grouped > 0) nibbleKTokens<true>(*task.m, g, task.x, task.xStride, grouped, task.y, task.yStride);
    if (task.tokens > grouped)
      nibbleKTokens<false>(*task.m, g, task.x + size_t(grouped) * task.xStride, task.xStride,
                           task.tokens - grouped, task.y + grouped * task.yStride, task.yStride);
  }
}

}  // namespace
}  // namespace ember::cpu
