#include "backend/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/cuda/cuda_device.h"
#include "model/memory_plan.h"
#include "model/model_weights.h"

namespace ember::cuda {
namespace {

// The weights and the working set of a one-token step must fit in the device's free memory
// before the upload starts: a message with the numbers (model::planMemory's) instead of a
// cudaMalloc failure halfway through. The KV pool is checked when the engine sizes it.
void requireWeightsFit(const gguf::GgufFile& file, const model::ModelConfig& config, int device,
                       const std::string& deviceLabel) {
  model::MemoryPlanInput input;
  input.weightBytes = model::weightBytes(file);
  input.kvBytesPerToken = model::kvBytesPerToken(config);
  input.contextLength = 1;
  input.sequences = 1;
  input.workspaceBytes = model::estimateWorkspaceBytes(config, 1, 1);
  input.availableBytes = freeDeviceBytes(device);
  const model::MemoryPlan plan = model::planMemory(input);
  if (!plan.fits)
    throw ember::Error("cuda backend: the model's weights do not fit on " + deviceLabel + ": " +
                       plan.message);
}

}  // namespace

CudaBackend::CudaBackend(const gguf::GgufFile& file, const model::ModelConfig& config,
                         const CudaBackendOptions& options)
    : config_(config),
      // A mixture-of-experts step waits for the stream to route on the host: no graphs.
      graphs_(options.cudaGraphs && !config.mixtureOfExperts(),
              config.mixtureOfExperts()
                  ? "CUDA graphs are off for mixture-of-experts models (experts are routed on the host)"
                  : "CUDA graphs were switched off (EMBER_CUDA_GRAPHS=0)") {
  device_ = selectDevice(options.device);
  deviceName_ = deviceName(device_);
  site_ = {"load", -1};
  requireWeightsFit(file, config_, device_, name());
  try {
    bindDevice();
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    checkCublas(cublasCreate(&cublas_), site_, "cublasCreate");
    weights_ = uploadWeights(model::bindModelWeights(file, config_), options.progress);
    ws_.init(config_, weights_.largestMatrixElements, weights_.largestCols, site_);
    // The stream first: cublasSetStream resets the workspace to cuBLAS's own pool. A workspace
    // of our own means cuBLAS allocates nothing while a CUDA graph is being captured.
    checkCublas(cublasSetStream(cublas_, stream_), site_, "cublasSetStream");
    checkCublas(cublasSetWorkspace(cublas_, ws_.cublasScratch, ws_.cublasScratchBytes), site_,
                "cublasSetWorkspace");
  } catch (...) {
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
    throw;
  }
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  graphs_.clear();
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
}

void CudaBackend::bindDevice() const {
  // The runtime's current device is per host thread; the engine may call from another thread.
  check(cudaSetDevice(device_), "cudaSetDevice");
}

std::string CudaBackend::name() const {
  return "cuda:" + std::to_string(device_) + " (" + deviceName_ + ")";
}

BackendMemoryInfo CudaBackend::memoryInfo() const {
  BackendMemoryInfo info;
  info.weightBytes = weights_.memory.bytes();
  info.kvCacheBytes = kvCache_.bytes();
  info.workspaceBytes = ws_.bytes() + experts_.bytes();
  return info;
}

std::optional<uint64_t> CudaBackend::freeMemoryBytes() const {
  try {
    return freeDeviceBytes(device_);
  } catch (const ember::Error&) {
    return std::nullopt;  // no figure, no check: the allocation itself still reports failure
  }
}

size_t CudaBackend::kvBytesPerBlock(int32_t blockSize) const {
  const size_t perToken = size_t(config_.kvHeadCount) * size_t(config_.headDim + config_.valueDim);
  return perToken * size_t(blockSize) * size_t(config_.layerCount) * sizeof(__half);
}

void CudaBackend::allocateKvCache(const KvCacheShape& shape) {
  if (shape.blockSize <= 0 || shape.blockCount <= 0)
    throw ember::Error("cuda backend: KV cache needs a positive block size and block count");
  site_ = {"allocateKvCache", -1};
  bindDevice();
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  graphs_.clear();  // they write into the old pool
  kvCache_.reset();
  kvShape_ = {};
  // One more block than asked for: the scratch block padded decode steps write to.
  const size_t blocks = size_t(shape.blockCount) + 1;
  kvHalvesPerLayer_ = kvBytesPerBlock(shape.blockSize) / sizeof(__half) /
                      size_t(config_.layerCount) * blocks;
  kvCache_ = DeviceMemory(kvHalvesPerLayer_ * size_t(config_.layerCount) * sizeof(__half), site_,
                          "the KV cache");
  kvShape_ = shape;
}

__half* CudaBackend::keyCache(int32_t layer) const {
  return kvCache_.as<__half>() + kvHalvesPerLayer_ * size_t(layer);
}

__half* CudaBackend::valueCache(int32_t layer) const {
  const size_t keyHalves = (size_t(kvShape_.blockCount) + 1) * size_t(config_.kvHeadCount) *
                           size_t(kvShape_.blockSize) * size_t(config_.headDim);
  return keyCache(layer) + keyHalves;
}

bool CudaBackend::copyBlock(int32_t from, int32_t to) {
  if (!kvCache_.get() || from < 0 || to < 0 || from >= kvShape_.blockCount ||
      to >= kvShape_.blockCount)
    return false;
  site_ = {"copyBlock", -1};
  bindDevice();
  const size_t slots = size_t(config_.kvHeadCount) * size_t(kvShape_.blockSize);
  const size_t keyBytes = slots * size_t(config_.headDim) * sizeof(__half);
  const size_t valueBytes = slots * size_t(config_.valueDim) * sizeof(__half);
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    site_.layer = il;
    char* keys = reinterpret_cast<char*>(keyCache(il));
    char* values = reinterpret_cast<char*>(valueCache(il));
    check(cudaMemcpyAsync(keys + size_t(to) * keyBytes, keys + size_t(from) * keyBytes, keyBytes,
                          cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (keys)");
    check(cudaMemcpyAsync(values + size_t(to) * valueBytes, values + size_t(from) * valueBytes,
                          valueBytes, cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (values)");
  }
  site_.layer = -1;
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return true;
}

// Host-RAM spill: a block's bytes are, per layer, its keys then its values (as the CPU's).
bool CudaBackend::readKvBlock(int32_t block, std::span<std::byte> out) {
  return transferKvBlock(block, out.data(), out.size(), cudaMemcpyDeviceToHost);
}

bool CudaBackend::writeKvBlock(int32_t block, std::span<const std::byte> in) {
  return transferKvBlock(block, const_cast<std::byte*>(in.data()), in.size(),
                         cudaMemcpyHostToDevice);
}

bool CudaBackend::transferKvBlock(int32_t block, std::byte* host, size_t bytes,
                                  cudaMemcpyKind kind) {
  if (!kvCache_.get() || block < 0 || block >= kvShape_.blockCount ||
      bytes != kvBytesPerBlock(kvShape_.blockSize))
    return false;
  site_ = {kind == cudaMemcpyDeviceToHost ? "readKvBlock" : "writeKvBlock", -1};
  bindDevice();
  const size_t slots = size_t(config_.kvHeadCount) * size_t(kvShape_.blockSize);
  const size_t keyBytes = slots * size_t(config_.headDim) * sizeof(__half);
  const size_t valueBytes = slots * size_t(config_.valueDim) * sizeof(__half);
  for (int32_t il = 0; il < config_.layerCount; ++il) {
    site_.layer = il;
    char* keys = reinterpret_cast<char*>(keyCache(il)) + size_t(block) * keyBytes;
    char* values = reinterpret_cast<char*>(valueCache(il)) + size_t(block) * valueBytes;
    const bool down = kind == cudaMemcpyDeviceToHost;
    check(cudaMemcpyAsync(down ? static_cast<void*>(host) : keys, down ? keys : static_cast<void*>(host),
                          keyBytes, kind, stream_),
          "cudaMemcpyAsync (keys)");
    host += keyBytes;
    check(cudaMemcpyAsync(down ? static_cast<void*>(host) : values,
                          down ? values : static_cast<void*>(host), valueBytes, kind, stream_),
          "cudaMemcpyAsync (values)");
    host += valueBytes;
  }
  site_.layer = -1;
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return true;
}

void CudaBackend::reserveWorkspace(const StepPlan& plan) {
  WorkspaceNeeds needs;
  needs.tokens = plan.tokens;
  needs.logitRows = plan.logitRows;
  needs.metadataInts = plan.metadata.size();
  kernels::AttentionShape shape = attentionShape(model::attentionStep(config_, 0));
  for (const bool sliding : {false, true}) {  // the two kinds of layers may split differently
    shape.slidingWindow = sliding ? config_.slidingWindow : 0;
    needs.attentionBytes = std::max(
        needs.attentionBytes,
        kernels::pagedAttentionWorkspaceBytes(plan.tokens, plan.maxPosition, shape));
  }
  try {
    if (ws_.reserve(needs, site_)) graphs_.clear();
  } catch (...) {
    graphs_.clear();  // some buffers may have moved before the failure
    throw;
  }
}

CudaBackend::StepInputs CudaBackend::uploadMetadata(const StepPlan& plan) {
  // One pinned staging buffer and one copy. The previous step ended with a synchronize, so the
  // staging buffer is free to overwrite.
  std::memcpy(ws_.stagedMetadata, plan.metadata.data(), plan.metadata.size() * sizeof(int32_t));
  check(cudaMemcpyAsync(ws_.metadata, ws_.stagedMetadata, plan.metadata.size() * sizeof(int32_t),
                        cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (step metadata)");
  const int32_t* m = ws_.metadata;
  return {m + plan.tokenIdsAt(),      m + plan.tokenSequenceAt(), m + plan.tokenPositionAt(),
          m + plan.slotMappingAt(),   m + plan.outputIndexAt(),   m + plan.blockTablesAt()};
}

void CudaBackend::downloadLogits(const StepPlan& plan, ForwardOutput& out) {
  const size_t vocab = size_t(config_.vocabSize);
  out.rows = size_t(plan.returnedRows);
  out.logits.resize(out.rows * vocab);
  if (out.rows > 0)
    check(cudaMemcpyAsync(out.logits.data(), ws_.logits, out.logits.size() * sizeof(float),
                          cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (logits)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");  // also surfaces kernel faults
}

void CudaBackend::forward(const ForwardBatch& batch, ForwardOutput& out) {
  site_ = {"forward", -1};
  StepLimits limits;
  limits.vocabSize = config_.vocabSize;
  limits.contextLength = config_.contextLength;
  limits.blockSize = kvShape_.blockSize;
  limits.blockCount = kvCache_.get() ? kvShape_.blockCount : 0;
  limits.scratchBlock = kvShape_.blockCount;
  planStep(batch, limits, plan_);  // a bad batch throws before anything is launched

  bindDevice();
  reserveWorkspace(plan_);
  try {
    const StepInputs in = uploadMetadata(plan_);
    const auto launches = [&] { runModel(plan_, in); };
    const bool replayed =
        plan_.bucket > 0 &&
        graphs_.launch({plan_.bucket, plan_.tableWidth}, stream_, launches, site_);
    if (!replayed) launches();
    site_.layer = -1;
    downloadLogits(plan_, out);
  } catch (...) {
    // Leave the stream idle (the staging buffer and logits are reused) for the next step.
    cudaStreamSynchronize(stream_);
    cudaGetLastError();
    site_.layer = -1;
    throw;
  }
}

CudaBackendOptions cudaOptionsFromEnvironment() {
  CudaBackendOptions options;
  if (const char* device = std::getenv("EMBER_CUDA_DEVICE"); device && *device) {
    char* end = nullptr;
    const long value = std::strtol(device, &end, 10);
    if (*end != '\0' || value < 0 || value > 1024)
      throw ember::Error(std::string("EMBER_CUDA_DEVICE must be a device number, not \"") +
                         device + "\"");
    options.device = int(value);
  }
  if (const char* graphs = std::getenv("EMBER_CUDA_GRAPHS"); graphs && *graphs)
    options.cudaGraphs = std::strcmp(graphs, "0") != 0;
  return options;
}

int cudaDeviceCount(std::string* reason) { return usableDeviceCount(reason); }

std::unique_ptr<Backend> makeCudaBackend(const gguf::GgufFile& file,
                                         const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(file, model::readModelConfig(file), options);
}

}  // namespace ember::cuda
