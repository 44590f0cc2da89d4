#pragma once
// Matrix products on (quantized) weights for the CPU backend:
//   y (n, rows) = x (n, cols) @ W^T          W: (rows, cols) in its GGUF type
// Activations are float32; for quantized weights they are quantized once per call into the
// matching 8-bit block format (Q8_0, with Q8_1's block sums for Q4_1/Q5_1, or Q8_K) and the dot
// products run on integers, as llama.cpp does, with SIMD chosen at run time (AVX2+FMA baseline;
// AVX-512/VNNI when present; scalar path that the tests compare against). For F16/BF16 weights
// the activations are rounded to F16/BF16 first (llama.cpp's vec_dot_type for them), for F32
// they are used as they are. Layouts and rounding: backend/cpu/quant/kernels.h.
//
// Threads: rows are split across the pool; for n > 1 a tile of weight rows is reused for a tile
// of tokens while it is in cache. Each output element is computed by the same operations
// whatever the thread count, so results do not depend on it; they depend on n only where
// llama.cpp's do (Q4_K matrices it repacks: tokens in whole groups of 4 sum in another order
// than the rest, see quant/x86_dot_q4k_llama_order.h). x may alias y (x is consumed into the
// scratch before y is written).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/thread_pool.h"
#include "gguf/ggml_types.h"
#include "gguf/gguf_file.h"

namespace ember::cpu {

struct RepackedMatrix;

// Which kernels the backend runs. Reference: the kernels above, whose sums follow llama.cpp's
// order (bit-exact logits). Fast: the 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)
// repacked at load (repack.h) for the kernels of repacked_kernels.h at the best SIMD level,
// which keep llama.cpp's order, so every layer computes the reference's bits (the output matrix
// alone takes the fused formula below: its logits feed no later quantization, so they stay
// within the last bits of the reference's, mean KL to llama.cpp about 4e-12); so is Q4_K with
// a multiple of 8 rows and Q6_K where the fast level is AVX-512 VNNI (lossless NibbleK and
// SixK layouts, the reference kernels' Q8_K activations and float orders). Other K-quants and
// float types keep the reference kernels. Approx: Fast with the other K-quants (Q5_K, and Q4_K
// or Q6_K where the lossless layouts do not apply) repacked too; those products use 32-element activation blocks and
// another float order than llama.cpp, so they equal it only within a tolerance. Approx also
// runs the 32-element types on the fused formula (one float step per block), on Intel AMX's
// tile unit for products of several tokens where the CPU has it.
enum class KernelMode { Reference, Fast, Approx };
const char* kernelModeName(KernelMode mode);  // "reference" / "fast" / "approx"
// Parses one of those names; throws ember::Error for anything else.
KernelMode parseKernelMode(const std::string& name);

struct WeightMatrix {
  gguf::GgmlType type = gguf::GgmlType::F32;
  int64_t rows = 0;  // output features (GGUF shape[1])
  int64_t cols = 0;  // input features (GGUF shape[0], contiguous)
  size_t rowBytes = 0;
  const uint8_t* data = nullptr;  // (rows, rowBytes), usually a view into the mapped file
  // Set in fast mode: the same matrix repacked (owned by the backend's weights); matmul then
  // uses it instead of `data`.
  const RepackedMatrix* repacked = nullptr;
};

bool isSupportedWeightType(gguf::GgmlType type);
// Views a 1-D or 2-D tensor as a matrix (1-D: one row); throws ember::Error naming the tensor and
// its type when the type is not supported or cols does not fill whole blocks.
WeightMatrix weightMatrix(const gguf::TensorInfo& tensor);

// Reusable buffers for the quantized activations, so that decoding allocates nothing per token:
// matmul only grows it (to about n * cols bytes for quantized weights, 4 * n * cols for float).
struct MatmulScratch {
  std::vector<uint8_t> quantizedX;
  std::vector<uint8_t> repackedX;  // Q8x32 rows for the repacked kernels
  std::vector<float> inputCopy;    // x, when one call mixes repacked and other matrices
};

// Work on row t of x that has to be done before a product reads that row: the layer's deferred
// per-token steps (cpu_backend_layer.cpp). The product calls it once for every row, just before
// it quantizes the row, spread over the threads within its own pool round trip (no chunk of the
// product starts before every row is done). Null run: nothing to do.
struct RowPrologue {
  void (*run)(void* ctx, int64_t row) = nullptr;
  void* ctx = nullptr;
  void operator()(int64_t row) const {
    if (run != nullptr) run(ctx, row);
  }
};

void matmul(ThreadPool& pool, const WeightMatrix& w, const float* x, int64_t n, float* y,
            MatmulScratch& scratch, RowPrologue before = {});

// Several products of one input, y_i (n, rows_i) = x (n, cols) @ W_i^T (e.g. Q, K and V, or
// gate and up): x is prepared once per activation format and the rows of all matrices are
// split across the pool in one call, saving a pool round trip per extra matrix. Results are
// bitwise those of separate matmul calls. All W_i must have the same cols; y_i must not overlap
// one another (each may alias x).
struct MatmulTarget {
  const WeightMatrix* w;
  float* y;
};
constexpr size_t kMaxSharedTargets = 8;
void matmulShared(ThreadPool& pool, std::span<const MatmulTarget> targets, const float* x,
                  int64_t n, MatmulScratch& scratch, RowPrologue before = {});
// Runs before(t) for every row t of [0, n) on the pool (a product that copies x first).
void runRowPrologue(ThreadPool& pool, int64_t n, RowPrologue before);

// out (cols) = row `row` of W as float32 (embedding lookup).
void dequantizeRow(const WeightMatrix& w, int64_t row, float* out);

// Which SIMD level the kernels use on this CPU ("avx512-vnni", "avx2", "scalar"). A CPU with
// AVX-512 but without VNNI runs the AVX2 kernels.
const char* simdLevelName();

enum class SimdLevel { Scalar, Avx2, Avx512Vnni };
const char* simdLevelName(SimdLevel level);
SimdLevel detectedSimdLevel();  // the best level this CPU supports
SimdLevel simdLevel();          // the level the reference kernels use now
// The level of the fast kernels: the best one (or the one a test forced, or EMBER_SIMD=avx2 /
// scalar asks for).
SimdLevel fastSimdLevel();
bool simdLevelSupported(SimdLevel level);
// Tests only: makes matmul use `level` (throws ember::Error when the CPU lacks it). Process-wide;
// do not change it while another thread runs matmul.
void setSimdLevelForTesting(SimdLevel level);

}  // namespace ember::cpu
