#pragma once
// The AVX-512 VNNI kernel on SixK (lossless Q6_K, repack.h) against Q8xK activation rows, in the
// reference Q6_K kernels' float order (repacked_kernels.h), so it gives their bits. The 16 rows
// of a group are the 16 lanes of a vector. Per chunk of 32 elements the 8 quad vectors are
// unpacked once (low nibble | top 2 bits, q in 0..63 as vpdpbusd's unsigned side) and serve
// every token of a tile: vpdpbusd against the broadcast activation quads gives the rows' exact
// quad dots, vpmulld weights them by the rows' sub-block scales, and one vpdpwssd of the rows'
// scale pairs against the activation's pair of 16-element sums gives the -32 offset's term.
// Blocks of 3360 bytes are not all 64-byte aligned, hence the unaligned loads. Included by
// x86_repacked_kernels.h in the AVX-512 build only.

namespace ember::cpu {
namespace {

constexpr int kSixKTiledTile = 8;  // tokens per tile in the tiled order (one integer sum each)
constexpr int kSixKLaneTile = 2;   // in the vec_dot order (8 lane sums each)

// kTiled: the reference's tiled order (one float step per super-block on the whole integer
// sum); otherwise its vec_dot order (8 lanes of partial sums per row).
template <bool kTiled, int T>
void sixKTile(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride, float* y,
              int64_t yStride) {
  constexpr int kLanes = kTiled ? 1 : 8;
  quant::Q8xKRow xr[T];
  for (int t = 0; t < T; ++t) xr[t] = quant::q8xKRow(x + size_t(t) * xStride, m.cols);
  __m512 acc[T][kLanes];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
    for (int k = 0; k < kLanes; ++k) acc[t][k] = _mm512_setzero_ps();
  const __m512i lowNibble = _mm512_set1_epi8(0x0f);
  const __m512i topBits = _mm512_set1_epi8(0x30);
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t b = 0; b < m.blocks; ++b) {
    const uint8_t* blk = m.block(g, b);
    prefetchBlock(blk + 2 * kSixKBytes, kSixKBytes);
    __m512i sum[T][kLanes];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 8
      for (int k = 0; k < kLanes; ++k) sum[t][k] = zero;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // chunks 4h .. 4h + 3 share the high-bit vectors
#pragma GCC unroll 4
      for (int cc = 0; cc < 4; ++cc) {
        const int c = 4 * h + cc;
        const uint8_t* low = blk + 512 * (c / 2);
        const uint8_t* high = blk + kSixKHigh + 512 * h;
        __m512i w[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          const __m512i l = _mm512_loadu_si512(low + 64 * k);
          const __m512i hb = _mm512_loadu_si512(high + 64 * k);
          // Bits 2cc, 2cc + 1 of the high byte move to bits 4, 5 (16-bit shifts: for these
          // distances the bits that land there come from the same byte).
          const __m512i moved = cc < 2    ? _mm512_slli_epi16(hb, 4 - 2 * cc)
                                : cc == 2 ? hb
                                          : _mm512_srli_epi16(hb, 2);
          const __m512i nib = _mm512_and_si512(cc % 2 ? _mm512_srli_epi16(l, 4) : l, lowNibble);
          w[k] = _mm512_ternarylogic_epi32(nib, moved, topBits, 0xF8);  // nib | (moved & top)
        }
        // The rows' scale pairs of sub-blocks 2c, 2c + 1 as 16-bit lanes, and each as 32-bit.
        const __m512i pairs = _mm512_cvtepi8_epi16(quant::load256(blk + kSixKScales + 32 * c));
        const __m512i scaleA = _mm512_srai_epi32(_mm512_slli_epi32(pairs, 16), 16);
        const __m512i scaleB = _mm512_srai_epi32(pairs, 16);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          const int8_t* xq = xr[t].qs + 256 * b + 32 * c;
          int32_t bsPair;
          std::memcpy(&bsPair, xr[t].bsums + 16 * b + 2 * c, 4);
          const __m512i offset =  // 32 (s_c0 bsum[2c] + s_c1 bsum[2c + 1]): lane c's
              _mm512_slli_epi32(_mm512_dpwssd_epi32(zero, pairs, _mm512_set1_epi32(bsPair)), 5);
          if constexpr (kTiled) {
            __m512i a = zero, bb = zero;
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
              a = _mm512_dpbusd_epi32(a, w[k], _mm512_set1_epi32(loadQuad(xq + 4 * k)));
              bb = _mm512_dpbusd_epi32(bb, w[4 + k], _mm512_set1_epi32(loadQuad(xq + 16 + 4 * k)));
            }
            const __m512i weighted = _mm512_add_epi32(_mm512_mullo_epi32(a, scaleA),
                                                      _mm512_mullo_epi32(bb, scaleB));
            sum[t][0] = _mm512_add_epi32(sum[t][0], _mm512_sub_epi32(weighted, offset));
          } else {
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
              const __m512i p =
                  _mm512_dpbusd_epi32(zero, w[k], _mm512_set1_epi32(loadQuad(xq + 4 * k)));
              sum[t][k] = _mm512_add_epi32(sum[t][k], _mm512_mullo_epi32(p, k < 4 ? scaleA : scaleB));
            }
            sum[t][c] = _mm512_sub_epi32(sum[t][c], offset);
          }
        }
      }
    }
    const __m512 d = _mm512_cvtph_ps(quant::load256(blk + kSixKD));
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m512 xd = _mm512_set1_ps(xr[t].d[b]);
      if constexpr (kTiled) {
        const __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(sum[t][0]), d);
        acc[t][0] = _mm512_fmadd_ps(scaled, xd, acc[t][0]);
      } else {
        const __m512 dd = _mm512_mul_ps(d, xd);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k)
          acc[t][k] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(sum[t][k]), acc[t][k]);
      }
    }
  }
  const int64_t rows = quant::minOf(kRepackGroupRows, m.rows - g * kRepackGroupRows);
  const __mmask16 valid = __mmask16((1u << rows) - 1);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    __m512 v = acc[t][0];
    if constexpr (!kTiled) {
      const __m512* a = acc[t];
      v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[4]), _mm512_add_ps(a[2], a[6])),
                        _mm512_add_ps(_mm512_add_ps(a[1], a[5]), _mm512_add_ps(a[3], a[7])));
    }
    _mm512_mask_storeu_ps(y + t * yStride + g * kRepackGroupRows, valid, v);
  }
}

template <bool kTiled>
void sixKTokens(const RepackedMatrix& m, int64_t g, const uint8_t* x, size_t xStride,
                int64_t tokens, float* y, int64_t yStride) {
  constexpr int kTile = kTiled ? kSixKTiledTile : kSixKLaneTile;
  int64_t t = 0;
  for (; t + kTile <= tokens; t += kTile)
    sixKTile<kTiled, kTile>(m, g, x + size_t(t) * xStride, xStride, y + t * yStride, yStride);
  x += size_t(t) * xStride;
  y += t * yStride;
  if constexpr (kTiled) {
    switch (tokens - t) {
      case 1: sixKTile<true, 1>(m, g, x, xStride, y, yStride); break;
      case 2: sixKTile<true, 2>(m, g, x, xStride, y, yStride); break;
      case 3: sixKTile<true, 3>(m, g, x, xStride, y, yStride); break;
      case 4: sixKTile<true, 4>(m, g, x, xStride, y, yStride); break;
      case 5: sixKTile<true, 5>(m, g, x, xStride, y, yStride); break;
      case 6: sixKTile<true, 6>(m, g, x, xStride, y, yStride); break;
      case 7: sixKTile<true, 7>(m, g, x, xStride, y, yStride); break;
      default: break;
    }
  } else if (t < tokens) {
    sixKTile<false, 1>(m, g, x, xStride, y, yStride);
  }
}

void runSixK(const RepackedTask& task) {
  for (int64_t g = task.group0; g < task.group1; ++g) {
    if (task.tiledOrder)
      sixKTokens<true>(*task.m, g, task.x, task.xStride, task.tokens, task.y, task.yStride);
    else
      sixKTokens<false>(*task.m, g, task.x, task.xStride, task.tokens, task.y, task.yStride);
  }
}

}  // namespace
}  // namespace ember::cpu
