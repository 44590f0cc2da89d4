#pragma once
// Shared by the CUDA kernel tests: a skip when the machine has no CUDA device (the tests still
// compile everywhere nvcc exists), device buffers that free themselves, and checked copies.
#include <QtTest>

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace ember::kernels::test {

// Empty when a device is usable, else the reason to skip.
inline std::string cudaUnavailableReason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
  if (count == 0) return "no CUDA device on this machine";
  return {};
}

// Skips the current test function with the reason when there is no device.
#define EMBER_REQUIRE_CUDA_DEVICE()                                                   \
  do {                                                                                \
    const std::string reason_ = ::ember::kernels::test::cudaUnavailableReason();      \
    if (!reason_.empty()) QSKIP(("GPU test skipped: " + reason_).c_str());            \
  } while (false)

#define EMBER_CHECK_CUDA(call)                                                        \
  do {                                                                                \
    const cudaError_t err_ = (call);                                                  \
    QVERIFY2(err_ == cudaSuccess, cudaGetErrorString(err_));                          \
  } while (false)

// A device allocation of `count` elements of T, freed on destruction.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count = 0) : count_(count) {
    if (count_ > 0 && cudaMalloc(&data_, count_ * sizeof(T)) != cudaSuccess) data_ = nullptr;
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    if (data_) cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  size_t size() const { return count_; }
  bool ok() const { return count_ == 0 || data_ != nullptr; }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (data_) cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// n values drawn uniformly from [lo, hi) with a fixed seed.
inline std::vector<float> randomVector(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Empty when every got[i] is within atol + rtol * |want[i]|, else the first offender.
inline QString mismatch(const std::vector<float>& got, const std::vector<float>& want,
                        double atol, double rtol) {
  if (got.size() != want.size())
    return QStringLiteral("size %1 != %2").arg(got.size()).arg(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(double(got[i]) - double(want[i]));
    if (!(diff <= atol + rtol * std::fabs(double(want[i]))))
      return QStringLiteral("element %1: gpu %2, reference %3 (diff %4)")
          .arg(i).arg(double(got[i]), 0, 'g', 9).arg(double(want[i]), 0, 'g', 9)
          .arg(diff, 0, 'g', 3);
  }
  return {};
}

}  // namespace ember::kernels::test
