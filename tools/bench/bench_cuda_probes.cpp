// The device limits ember-bench gpu compares against: copy bandwidth and cuBLAS matrix rate,
// each timed with CUDA events after a warm-up, best of several launches. Built as its own module
// (libember_bench_cuda.so beside libember_cuda.so), which ember-bench opens only for `gpu`: the
// other figures (memory, load) run in a process that maps no CUDA library.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "ember/error.h"

namespace ember::bench {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS: ") + what + " failed (status " +
                std::to_string(int(status)) + ")");
}

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  // Milliseconds of what `work` enqueues on `stream`.
  template <class F>
  float time(cudaStream_t stream, F&& work) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    work();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  }
};

// Random-looking 16-bit values in [-1, 1) (random data, not zeros: zeros run faster).
template <class Half>
std::vector<Half> randomMatrix(size_t count, uint32_t seed) {
  std::vector<Half> values(count);
  uint32_t state = seed;
  for (Half& v : values) {
    state = state * 1664525u + 1013904223u;
    v = Half(float(state >> 8) / float(1u << 23) - 1.0f);
  }
  return values;
}

}  // namespace

std::string deviceDescription() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return std::string(p.name) + " (cc " + std::to_string(p.major) + "." + std::to_string(p.minor) +
         ", " + std::to_string(p.multiProcessorCount) + " SMs, " +
         std::to_string(p.totalGlobalMem >> 20) + " MiB)";
}

double probeDeviceCopyBandwidth(size_t bytes) {
  DeviceBuffer from(bytes), to(bytes);
  check(cudaMemset(from.p, 1, bytes), "cudaMemset");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  EventPair events;
  float best = 1e30f;
  for (int i = 0; i < 6; ++i) {  // the first is a warm-up
    const float ms = events.time(stream, [&] {
      check(cudaMemcpyAsync(to.p, from.p, bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    });
    if (i > 0) best = std::min(best, ms);
  }
  cudaStreamDestroy(stream);
  return 2.0 * double(bytes) / (double(best) * 1e-3) / 1e9;  // each byte is read and written
}

double probeGemmTflops(bool bf16, int size) {
  const size_t count = size_t(size) * size_t(size);
  const size_t bytes = count * 2;
  DeviceBuffer a(bytes), b(bytes), c(bytes);
  if (bf16) {
    const auto host = randomMatrix<__nv_bfloat16>(count, 17);
    check(cudaMemcpy(a.p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(b.p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  } else {
    const auto host = randomMatrix<__half>(count, 17);
    check(cudaMemcpy(a.p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(b.p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  check(cublasSetStream(handle, stream), "cublasSetStream");
  const cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  const auto gemm = [&] {
    check(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, size, size, size, &alpha, a.p, type, size,
                       b.p, type, size, &beta, c.p, type, size, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  EventPair events;
  constexpr int kLaunches = 20;
  float best = 1e30f;
  for (int round = 0; round < 4; ++round) {  // the first round is a warm-up
    const float ms = events.time(stream, [&] {
      for (int i = 0; i < kLaunches; ++i) gemm();
    });
    if (round > 0) best = std::min(best, ms);
  }
  cudaStreamDestroy(stream);
  cublasDestroy(handle);
  const double flops = 2.0 * double(size) * double(size) * double(size) * kLaunches;
  return flops / (double(best) * 1e-3) / 1e12;
}

}  // namespace ember::bench

extern "C" __attribute__((visibility("default"))) const ember::bench::GpuProbes*
ember_bench_gpu_probes() {
  static const ember::bench::GpuProbes probes{&ember::bench::probeDeviceCopyBandwidth,
                                              &ember::bench::probeGemmTflops,
                                              &ember::bench::deviceDescription};
  return &probes;
}
