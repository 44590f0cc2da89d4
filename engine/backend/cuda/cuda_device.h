#pragma once
// The CUDA device the backend runs on (which one, its name) and memory that frees itself:
// DeviceMemory (cudaMalloc) and PinnedMemory (cudaMallocHost, for asynchronous uploads).
#include <cstddef>
#include <string>
#include <utility>

#include "backend/cuda/cuda_check.h"

namespace ember::cuda {

// Number of usable CUDA devices; 0 with `reason` filled in when there are none (no driver, no
// device, ...).
int usableDeviceCount(std::string* reason);

// The device to use: `requested` when >= 0 (checked against the count), else the one with the
// most free memory. Throws ember::Error when there is no device or `requested` does not exist.
int selectDevice(int requested);

// "NVIDIA H200"
std::string deviceName(int device);

// Bytes of memory free on `device` now (cudaMemGetInfo; makes `device` current). Throws
// ember::Error when the runtime cannot say.
size_t freeDeviceBytes(int device);

class DeviceMemory {
 public:
  DeviceMemory() = default;
  // Throws CudaError ("CUDA error in <phase> (cudaMalloc 123 MiB for <what>): out of memory").
  DeviceMemory(size_t bytes, const CudaSite& site, const char* what);
  ~DeviceMemory() { reset(); }
  DeviceMemory(DeviceMemory&& other) noexcept { swap(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    DeviceMemory(std::move(other)).swap(*this);
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* get() const { return data_; }
  template <typename T>
  T* as(size_t byteOffset = 0) const {
    return reinterpret_cast<T*>(static_cast<char*>(data_) + byteOffset);
  }
  size_t bytes() const { return bytes_; }
  void reset();

 private:
  void swap(DeviceMemory& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

class PinnedMemory {
 public:
  PinnedMemory() = default;
  PinnedMemory(size_t bytes, const CudaSite& site, const char* what);
  ~PinnedMemory() { reset(); }
  PinnedMemory(PinnedMemory&& other) noexcept { swap(other); }
  PinnedMemory& operator=(PinnedMemory&& other) noexcept {
    PinnedMemory(std::move(other)).swap(*this);
    return *this;
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;

  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }
  void reset();

 private:
  void swap(PinnedMemory& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Rounds up to the 256-byte alignment cudaMalloc gives, for sub-allocations of one buffer.
constexpr size_t alignDevice(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace ember::cuda
