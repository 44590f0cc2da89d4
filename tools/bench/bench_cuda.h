#pragma once
// ember-bench gpu: the CUDA figures, each against a limit measured in the same run.
//   copy bandwidth   device-to-device cudaMemcpyAsync of 1 GiB (bytes read + written), GB/s
//   matrix rate      cuBLAS 4096 x 4096 x 4096 GEMM in bf16 and fp16 (fp32 accumulate), TFLOP/s
//   tg128            batch-1 decode tokens/s on the CUDA backend after a 512-token prompt, with
//                    its ratio to the roofline bandwidth / (weights + KV bytes read per token)
//                    and the fixed overhead per token (measured time - bytes / bandwidth), µs
//   pp512, pp2048    prompt tokens/s and achieved TFLOP/s (2 x layer matrix parameters x
//                    tokens/s; the output matrix sees only the last token) as a fraction of the
//                    bf16 matrix rate
//   batchC           aggregate decode tokens/s at C = 8, 16, 32, 64 concurrent sequences against
//                    the batched roofline C / max((weights + C x KV bytes) / bandwidth,
//                    2 x params x C / bf16 rate)
#include <cstdint>
#include <string>

#include "bench_report.h"

namespace ember::bench {

struct GpuBenchOptions {
  std::string modelPath;
  int repetitions = 5;
  uint64_t promptSeed = 1234;
};

// Runs every figure above and reports each through `reporter`. Without CUDA in the build, or
// without a device, throws ember::Error saying so.
int runGpuFigures(const GpuBenchOptions& options, Reporter& reporter);

// Device probes (bench_cuda_probes.cpp: the module libember_bench_cuda.so of CUDA builds).
double probeDeviceCopyBandwidth(size_t bytes = size_t(1) << 30);  // GB/s, read + written
double probeGemmTflops(bool bf16, int size = 4096);                // cuBLAS GEMM, TFLOP/s
std::string deviceDescription();                                   // "NVIDIA H200 (cc 9.0, 132 SMs)"

// What the probes' module exports (ember_bench_gpu_probes); both sides come from one build.
struct GpuProbes {
  double (*copyBandwidth)(size_t bytes);
  double (*gemmTflops)(bool bf16, int size);
  std::string (*deviceDescription)();
};

}  // namespace ember::bench
