#pragma once
// Shared by the CUDA kernel tests: a skip when the machine has no CUDA device (the tests still
// compile everywhere nvcc exists), device buffers that free themselves, and checked copies.
#include <QtTest>

#include <cuda_runtime.h>

#include <cstddef>
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

}  // namespace ember::kernels::test
