#include "backend/cpu/matmul.h"

#include <algorithm>
#include <string>

#include "backend/cpu/quant/kernels.h"
#include "backend/cpu/repacked_matmul.h"
#include "ember/error.h"

namespace ember::cpu {

namespace {

using gguf::GgmlType;

// Decode (one token): smaller matrices run on the calling thread alone; waking the others would
// cost about as much as the product.
constexpr size_t kParallelMinBytes = 32 * 1024;
// Prompt (several tokens): a tile of weight rows (~L1) is reused for a tile of tokens whose
// quantized activations stay in L2.
constexpr size_t kRowTileBytes = 16 * 1024;
constexpr size_t kTokenTileBytes = 256 * 1024;
constexpr int64_t kRowMultiple = 4;  // the kernels' row tile

std::string describe(const gguf::TensorInfo& t) {
  return "tensor '" + t.name + "' (" + std::string(gguf::ggmlTypeName(t.type)) + ")";
}

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

const char* kernelModeName(KernelMode mode) {
  switch (mode) {
    case KernelMode::Fast:
      return "fast";
    case KernelMode::Approx:
      return "approx";
    case KernelMode::Reference:
      break;
  }
  return "reference";
}

KernelMode parseKernelMode(const std::string& name) {
  if (name == "reference") return KernelMode::Reference;
  if (name == "fast") return KernelMode::Fast;
  if (name == "approx") return KernelMode::Approx;
  throw Error("unknown kernels \"" + name + "\" (choose fast, reference or approx)");
}

bool isSupportedWeightType(GgmlType type) { return quant::scalarKernels(type) != nullptr; }

WeightMatrix weightMatrix(const gguf::TensorInfo& tensor) {
  if (!isSupportedWeightType(tensor.type))
    throw Error(describe(tensor) +
                ": type not supported by the CPU backend (supported: F32, F16, BF16, Q4_0, Q4_1, "
                "Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4)");
  if (tensor.shape.empty()) throw Error(describe(tensor) + ": has no dimensions");
  uint64_t rows = 1;
  for (size_t i = 1; i < tensor.shape.size(); ++i) {
    if (i >= 2 && tensor.shape[i] != 1)
      throw Error(describe(tensor) + ": is not a matrix (" + std::to_string(tensor.shape.size()) +
                  " dimensions)");
    rows *= tensor.shape[i];
  }
  const uint64_t cols = tensor.shape[0];
  const auto traits = gguf::ggmlTypeTraits(uint32_t(tensor.type));
  if (cols == 0 || rows == 0) throw Error(describe(tensor) + ": is empty");
  if (cols % traits->blockSize != 0)
    throw Error(describe(tensor) + ": row length " + std::to_string(cols) +
                " is not a multiple of the block size " + std::to_string(traits->blockSize));
  const uint64_t rowBytes = cols / traits->blockSize * traits->typeSize;
  if (tensor.data.data() == nullptr || rows > tensor.data.size() / rowBytes)
    throw Error(describe(tensor) + ": data is shorter than " + std::to_string(rows) + " rows of " +
                std::to_string(rowBytes) + " bytes");
  if (reinterpret_cast<uintptr_t>(tensor.data.data()) % 2 != 0)
    throw Error(describe(tensor) + ": data is not 2-byte aligned");
  WeightMatrix w;
  w.type = tensor.type;
  w.rows = int64_t(rows);
  w.cols = int64_t(cols);
  w.rowBytes = size_t(rowBytes);
  w.data = tensor.data.data();
  return w;
}

namespace {

// One matrix of a shared product, with its kernels and its prepared activations.
struct Piece {
  const WeightMatrix* w;
  float* y;
  const quant::TypeKernels* k;
  size_t xOffset = 0;  // of its prepared activations in the scratch
  size_t xStride = 0;
  int64_t firstRow = 0;  // in the concatenation of all matrices' rows
  // The kernels for the tokens llama.cpp runs in groups of 4 / the others (see TypeKernels):
  // `dot` for both unless llama.cpp repacks the matrix or runs this product tiled.
  quant::DotFn groupedDot = nullptr;
  quant::DotFn singleDot = nullptr;
};

Piece makePiece(const WeightMatrix& w, float* y, const quant::TypeKernels* k, size_t xOffset,
                size_t xStride, int64_t firstRow, int64_t n) {
  Piece p{&w, y, k, xOffset, xStride, firstRow, k->dot, k->dot};
  if (k->dotRepackedGroups && k->dotRepackedSingles && w.rows % quant::kRepackRowMultiple == 0) {
    p.groupedDot = k->dotRepackedGroups;
    p.singleDot = k->dotRepackedSingles;
  } else if (k->dotTiled && n >= quant::kTiledMinTokens) {
    p.groupedDot = p.singleDot = k->dotTiled;
  }
  return p;
}

// Activations prepared once per preparation function (types that share one share the rows).
struct PreparedInput {
  quant::PrepareFn prepare;
  size_t stride;
  size_t offset;  // in the scratch
};

}  // namespace

void runRowPrologue(ThreadPool& pool, int64_t n, RowPrologue before) {
  if (before.run == nullptr) return;
  pool.parallelFor(n, 1, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) before(t);
  });
}

void matmulShared(ThreadPool& pool, std::span<const MatmulTarget> targets, const float* x,
                  int64_t n, MatmulScratch& scratch, RowPrologue before) {
  if (n <= 0 || targets.empty()) return;
  size_t repackedCount = 0;
  for (const MatmulTarget& t : targets) repackedCount += t.w->repacked != nullptr;
  if (repackedCount == targets.size())
    return repackedMatmulShared(pool, targets, x, n, scratch, before);
  if (repackedCount > 0) {
    // Mixed: each matrix on its own kernels, from a copy of x (a y may alias it).
    runRowPrologue(pool, n, before);
    const int64_t cols = targets[0].w->cols;
    scratch.inputCopy.assign(x, x + n * cols);
    std::vector<float> copy = std::move(scratch.inputCopy);
    for (const MatmulTarget& t : targets) matmulShared(pool, {&t, 1}, copy.data(), n, scratch);
    scratch.inputCopy = std::move(copy);
    return;
  }
  if (targets.size() > kMaxSharedTargets)
    throw Error("matmulShared: at most " + std::to_string(kMaxSharedTargets) + " matrices");
  Piece pieces[kMaxSharedTargets];
  PreparedInput inputs[kMaxSharedTargets];
  size_t inputCount = 0, scratchBytes = 64;
  int64_t totalRows = 0;
  size_t totalBytes = 0, widestRow = 0, widestInput = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const WeightMatrix& w = *targets[i].w;
    if (w.data == nullptr || w.rows <= 0 || w.cols <= 0) throw Error("matmul: empty weight matrix");
    if (w.cols != targets[0].w->cols)
      throw Error("matmulShared: matrices of " + std::to_string(w.cols) + " and " +
                  std::to_string(targets[0].w->cols) + " columns cannot share an input");
    const quant::TypeKernels* k = quant::kernelsFor(w.type, simdLevel());
    if (k == nullptr)
      throw Error("matmul: unsupported weight type " + std::string(gguf::ggmlTypeName(w.type)));
    size_t slot = 0;
    while (slot < inputCount && inputs[slot].prepare != k->prepare) ++slot;
    if (slot == inputCount) {
      const size_t stride = quant::activationRowBytes(k->format, w.cols);
      inputs[inputCount++] = {k->prepare, stride, scratchBytes - 64};
      scratchBytes += size_t(n) * stride;
      widestInput = std::max(widestInput, stride);
    }
    pieces[i] =
        makePiece(w, targets[i].y, k, inputs[slot].offset, inputs[slot].stride, totalRows, n);
    totalRows += w.rows;
    totalBytes += w.rowBytes * size_t(w.rows);
    widestRow = std::max(widestRow, w.rowBytes);
  }
  if (scratch.quantizedX.size() < scratchBytes) scratch.quantizedX.resize(scratchBytes);
  uint8_t* base = scratch.quantizedX.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;

  const int64_t cols = targets[0].w->cols;
  // The rows' deferred steps and their quantization: the prologue of the product's round trip.
  auto prepareTokens = [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      before(t);
      for (size_t s = 0; s < inputCount; ++s)
        inputs[s].prepare(x + t * cols, cols,
                          base + inputs[s].offset + size_t(t) * inputs[s].stride);
    }
  };

  // Runs f(piece, first row, end row) for the parts of [b, e) (concatenated rows) in each piece.
  auto forEachPiece = [&](int64_t b, int64_t e, auto&& f) {
    for (size_t i = 0; i < targets.size(); ++i) {
      const Piece& p = pieces[i];
      const int64_t first = std::max(b, p.firstRow), end = std::min(e, p.firstRow + p.w->rows);
      if (first < end) f(p, first - p.firstRow, end - p.firstRow);
    }
  };
  if (n == 1) {
    const int64_t grain = totalBytes < kParallelMinBytes ? totalRows : kRowMultiple;
    pool.parallelForAfter(n, prepareTokens, totalRows, grain, [&](int64_t b, int64_t e, int) {
      forEachPiece(b, e, [&](const Piece& p, int64_t r0, int64_t r1) {
        const WeightMatrix& w = *p.w;
        p.singleDot({w.data + r0 * w.rowBytes, w.rowBytes, r1 - r0, base + p.xOffset, p.xStride, 1,
                     cols, p.y + r0, w.rows});
      });
    });
    return;
  }
  const int64_t rowTile = std::clamp<int64_t>(
      roundUp(int64_t(kRowTileBytes / widestRow), kRowMultiple), kRowMultiple, 256);
  const int64_t tokenTile = std::clamp<int64_t>(int64_t(kTokenTileBytes / widestInput), 1, n);
  const int64_t groupedTokens = quant::repackedGroupTokens(n);
  pool.parallelForAfter(n, prepareTokens, totalRows, rowTile, [&](int64_t b, int64_t e, int) {
    for (int64_t t0 = 0; t0 < n; t0 += tokenTile) {
      const int64_t tEnd = std::min(t0 + tokenTile, n);
      forEachPiece(b, e, [&](const Piece& p, int64_t r0, int64_t r1) {
        const WeightMatrix& w = *p.w;
        // Tokens [t0, tEnd), split where llama.cpp's grouped tokens end.
        const int64_t split = std::clamp(groupedTokens, t0, tEnd);
        for (int64_t r = r0; r < r1; r += rowTile) {
          const int64_t rows = std::min(rowTile, r1 - r);
          if (split > t0)
            p.groupedDot({w.data + r * w.rowBytes, w.rowBytes, rows,
                          base + p.xOffset + t0 * p.xStride, p.xStride, split - t0, cols,
                          p.y + t0 * w.rows + r, w.rows});
          if (tEnd > split)
            p.singleDot({w.data + r * w.rowBytes, w.rowBytes, rows,
                         base + p.xOffset + split * p.xStride, p.xStride, tEnd - split, cols,
                         p.y + split * w.rows + r, w.rows});
        }
      });
    }
  });
}

void matmul(ThreadPool& pool, const WeightMatrix& w, const float* x, int64_t n, float* y,
            MatmulScratch& scratch, RowPrologue before) {
  const MatmulTarget target{&w, y};
  matmulShared(pool, {&target, 1}, x, n, scratch, before);
}

void dequantizeRow(const WeightMatrix& w, int64_t row, float* out) {
  if (w.data == nullptr || row < 0 || row >= w.rows)
    throw Error("dequantizeRow: row " + std::to_string(row) + " outside a matrix of " +
                std::to_string(w.rows) + " rows");
  quant::dequantizeScalar(w.type, w.data + row * w.rowBytes, w.cols, out);
}

}  // namespace ember::cpu
