#include "backend/cuda/cuda_device.h"

#include <utility>

namespace ember::cuda {
namespace {

std::string mebibytes(size_t bytes) {
  return std::to_string((bytes + (size_t(1) << 20) - 1) >> 20) + " MiB";
}

}  // namespace

int usableDeviceCount(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it: "no device" is an answer here, not a failure
    if (reason) *reason = std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
    return 0;
  }
  if (count == 0 && reason) *reason = "no CUDA device on this machine";
  return count;
}

int selectDevice(int requested) {
  std::string reason;
  const int count = usableDeviceCount(&reason);
  if (count == 0) throw ember::Error("cuda backend: " + reason);
  if (requested >= 0) {
    if (requested >= count)
      throw ember::Error("cuda backend: device " + std::to_string(requested) +
                         " requested, but this machine has " + std::to_string(count) +
                         " CUDA device(s)");
    return requested;
  }
  if (count == 1) return 0;
  // Several devices: the one with the most free memory (asking creates a context on each).
  int best = 0;
  size_t bestFree = 0;
  for (int d = 0; d < count; ++d) {
    size_t freeBytes = 0, total = 0;
    if (cudaSetDevice(d) != cudaSuccess || cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (freeBytes > bestFree) {
      bestFree = freeBytes;
      best = d;
    }
  }
  return best;
}

std::string deviceName(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown device";
  }
  return prop.name;
}

size_t freeDeviceBytes(int device) {
  size_t freeBytes = 0, totalBytes = 0;
  cudaError_t err = cudaSetDevice(device);
  if (err == cudaSuccess) err = cudaMemGetInfo(&freeBytes, &totalBytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw ember::Error("cuda backend: cannot read the free memory of device " +
                       std::to_string(device) + " (" + cudaGetErrorString(err) + ")");
  }
  return freeBytes;
}

DeviceMemory::DeviceMemory(size_t bytes, const CudaSite& site, const char* what) {
  if (bytes == 0) return;
#ifdef EMBER_CUDA_FAULT_INJECTION
  if (const cudaError_t injected = testing::resultOf("cudaMalloc", cudaSuccess)) {
    throwCudaError(site, "cudaMalloc " + mebibytes(bytes) + " for " + what,
                   cudaGetErrorString(injected));
  }
#endif
  const cudaError_t err = cudaMalloc(&data_, bytes);
  if (err != cudaSuccess) {
    data_ = nullptr;
    cudaGetLastError();
    throwCudaError(site, "cudaMalloc " + mebibytes(bytes) + " for " + what,
                   cudaGetErrorString(err));
  }
  bytes_ = bytes;
}

void DeviceMemory::reset() {
  if (data_) cudaFree(data_);  // errors here would be from earlier work; nothing to do about them
  data_ = nullptr;
  bytes_ = 0;
}

PinnedMemory::PinnedMemory(size_t bytes, const CudaSite& site, const char* what) {
  if (bytes == 0) return;
#ifdef EMBER_CUDA_FAULT_INJECTION
  if (const cudaError_t injected = testing::resultOf("cudaMallocHost", cudaSuccess)) {
    throwCudaError(site, "cudaMallocHost " + mebibytes(bytes) + " for " + what,
                   cudaGetErrorString(injected));
  }
#endif
  const cudaError_t err = cudaMallocHost(&data_, bytes);
  if (err != cudaSuccess) {
    data_ = nullptr;
    cudaGetLastError();
    throwCudaError(site, "cudaMallocHost " + mebibytes(bytes) + " for " + what,
                   cudaGetErrorString(err));
  }
  bytes_ = bytes;
}

void PinnedMemory::reset() {
  if (data_) cudaFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace ember::cuda
