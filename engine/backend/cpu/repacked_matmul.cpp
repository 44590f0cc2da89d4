#include "backend/cpu/repacked_matmul.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/repacked_kernels.h"
#include "ember/error.h"

namespace ember::cpu {
namespace {

// Decode: products under this many weight bytes run on the calling thread alone.
constexpr size_t kParallelMinBytes = 32 * 1024;
// Prompts: the activation rows of one token tile (walked once per row group) stay in L2.
constexpr size_t kTokenTileBytes = 192 * 1024;

struct Piece {
  const RepackedMatrix* m;
  float* y;
  RepackedDotFn dot;
  int64_t firstGroup;  // in the concatenation of all matrices' groups
};

}  // namespace

void repackedMatmulShared(ThreadPool& pool, std::span<const MatmulTarget> targets, const float* x,
                          int64_t n, MatmulScratch& scratch, RowPrologue before) {
  if (n <= 0 || targets.empty()) return;
  if (targets.size() > kMaxSharedTargets)
    throw Error("matmulShared: at most " + std::to_string(kMaxSharedTargets) + " matrices");
  const SimdLevel level = fastSimdLevel();
  const int64_t cols = targets[0].w->cols;
  // NibbleK and SixK read Q8xK activations, the other layouts Q8x32: a mix runs as separate
  // products from a copy of x (a y may alias it).
  auto readsQ8xK = [](const MatmulTarget& t) {
    return t.w->repacked != nullptr && (t.w->repacked->layout == RepackedLayout::NibbleK ||
                                        t.w->repacked->layout == RepackedLayout::SixK);
  };
  const bool q8xK = readsQ8xK(targets[0]);
  for (const MatmulTarget& t : targets)
    if (readsQ8xK(t) != q8xK) {
      runRowPrologue(pool, n, before);
      std::vector<float> copy(x, x + n * cols);
      for (const MatmulTarget& one : targets)
        repackedMatmulShared(pool, {&one, 1}, copy.data(), n, scratch);
      return;
    }
  // Products of several tokens on AMX, for the matrices it has kernels for (the fused formula:
  // not those that keep llama.cpp's lanes).
  const bool useAmx = n >= kAmxMinTokens && level == SimdLevel::Avx512Vnni && amxRepackedKernels();
  Piece pieces[kMaxSharedTargets];
  int64_t totalGroups = 0;
  size_t totalBytes = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const RepackedMatrix* m = targets[i].w->repacked;
    if (m == nullptr) throw Error("matmul: matrix is not repacked");
    if (m->cols != cols)
      throw Error("matmulShared: matrices of " + std::to_string(m->cols) + " and " +
                  std::to_string(cols) + " columns cannot share an input");
    RepackedDotFn dot = useAmx ? repackedKernelAmx(*m) : nullptr;
    pieces[i] = {m, targets[i].y, dot != nullptr ? dot : repackedKernel(*m, level), totalGroups};
    totalGroups += m->groups;
    totalBytes += m->bytes();
  }

  // (n, stride) Q8x32 rows, 64-byte aligned; written before any y (x may alias y).
  const size_t stride = quant::activationRowBytes(
      q8xK ? quant::ActivationFormat::Q8xK : quant::ActivationFormat::Q8x32, cols);
  if (scratch.repackedX.size() < size_t(n) * stride + 64)
    scratch.repackedX.resize(size_t(n) * stride + 64);
  uint8_t* base = scratch.repackedX.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  const quant::PrepareFn prepare =
      quant::kernelsFor(q8xK ? gguf::GgmlType::Q4_K : gguf::GgmlType::Q8_0, level)->prepare;
  // The rows' deferred steps and their quantization: the prologue of the product's round trip.
  auto prepareTokens = [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      before(t);
      prepare(x + t * cols, cols, base + size_t(t) * stride);
    }
  };

  const int64_t tokenTile =
      n <= kRepackTokenTile
          ? n
          : std::max<int64_t>(kRepackTokenTile, int64_t(kTokenTileBytes / stride) /
                                                    kRepackTokenTile * kRepackTokenTile);
  const int64_t grain = n == 1 && totalBytes < kParallelMinBytes ? totalGroups : 1;
  const int64_t groupedTokens = quant::repackedGroupTokens(n);  // NibbleK's order split
  const bool tiledOrder = n >= quant::kTiledMinTokens;             // SixK's order
  pool.parallelForAfter(n, prepareTokens, totalGroups, grain, [&](int64_t b, int64_t e, int) {
    for (int64_t t0 = 0; t0 < n; t0 += tokenTile) {
      const int64_t tokens = std::min(tokenTile, n - t0);
      for (size_t i = 0; i < targets.size(); ++i) {
        const Piece& p = pieces[i];
        const int64_t g0 = std::max(b, p.firstGroup) - p.firstGroup;
        const int64_t g1 = std::min(e, p.firstGroup + p.m->groups) - p.firstGroup;
        if (g0 >= g1) continue;
        p.dot({p.m, g0, g1, base + size_t(t0) * stride, stride, tokens, p.y + t0 * p.m->rows,
               p.m->rows, std::clamp<int64_t>(groupedTokens - t0, 0, tokens), tiledOrder});
      }
    }
  });
}

}  // namespace ember::cpu
