#include "backend/cuda/cuda_workspace.h"

#include <algorithm>

namespace ember::cuda {
namespace {

constexpr int32_t kMinTokens = 64;          // the largest decode bucket: decode never regrows
constexpr size_t kMinMetadataInts = 16384;  // 64 KiB
constexpr size_t kCublasScratchBytes = size_t(32) << 20;  // fixed, so cuBLAS can be captured

template <typename T>
T grown(T capacity, T need, T minimum) {
  return need <= capacity ? capacity : std::max({need, capacity * 2, minimum});
}

}  // namespace

void CudaWorkspace::init(const model::ModelConfig& config, int64_t largestMatrixElements,
                         int32_t largestCols, const CudaSite& site) {
  config_ = &config;
  largestCols_ = largestCols;
  weightHalf_ = DeviceMemory(size_t(largestMatrixElements) * sizeof(__half), site,
                             "the fp16 weight scratch");
  weightHalf = weightHalf_.as<__half>();
  cublas_ = DeviceMemory(kCublasScratchBytes, site, "the cuBLAS workspace");
  cublasScratch = cublas_.get();
  cublasScratchBytes = cublas_.bytes();
}

bool CudaWorkspace::reserve(const WorkspaceNeeds& needs, const CudaSite& site) {
  const model::ModelConfig& c = *config_;
  bool moved = false;

  const int32_t tokens = grown(tokenCapacity_, needs.tokens, kMinTokens);
  if (tokens != tokenCapacity_) {
    const size_t T = size_t(tokens);
    size_t offset = 0;
    const auto place = [&](size_t bytes) {
      const size_t at = offset;
      offset += alignDevice(bytes);
      return at;
    };
    const size_t embd = T * size_t(c.embeddingDim) * sizeof(float);
    const size_t ff = T * size_t(c.ffnDim) * sizeof(float);
    const size_t at[] = {place(embd), place(embd), place(embd), place(embd),
                         place(T * size_t(c.qDim()) * sizeof(float)),
                         place(T * size_t(c.kvDim()) * sizeof(float)),
                         place(T * size_t(c.vDim()) * sizeof(float)),
                         place(T * size_t(c.attnOutDim()) * sizeof(float)),
                         place(ff), place(ff), place(ff),
                         place(T * size_t(largestCols_) * sizeof(__half))};
    // Free first (the old and new buffers need not both fit); capacity 0 until the new one exists.
    tokenCapacity_ = 0;
    activations_.reset();
    activations_ = DeviceMemory(offset, site, "activations");
    hidden = activations_.as<float>(at[0]);
    normed = activations_.as<float>(at[1]);
    blockOut = activations_.as<float>(at[2]);
    postNormed = activations_.as<float>(at[3]);
    q = activations_.as<float>(at[4]);
    k = activations_.as<float>(at[5]);
    v = activations_.as<float>(at[6]);
    attention = activations_.as<float>(at[7]);
    gate = activations_.as<float>(at[8]);
    up = activations_.as<float>(at[9]);
    activated = activations_.as<float>(at[10]);
    inputHalf = activations_.as<__half>(at[11]);
    tokenCapacity_ = tokens;
    moved = true;
  }

  const int32_t rows = grown(logitRowCapacity_, needs.logitRows, kMinTokens);
  if (rows != logitRowCapacity_) {
    logitRowCapacity_ = 0;
    logits_.reset();
    logits_ = DeviceMemory(size_t(rows) * size_t(c.vocabSize) * sizeof(float), site, "logits");
    logits = logits_.as<float>();
    logitRowCapacity_ = rows;
    moved = true;
  }

  const size_t attentionBytes =
      grown(attentionScratchBytes, needs.attentionBytes, size_t(1) << 20);
  if (attentionBytes != attentionScratchBytes) {
    attentionScratchBytes = 0;
    attention_.reset();
    attention_ = DeviceMemory(attentionBytes, site, "the attention workspace");
    attentionScratch = attention_.get();
    attentionScratchBytes = attentionBytes;
    moved = true;
  }

  const size_t ints = grown(metadataCapacity_, needs.metadataInts, kMinMetadataInts);
  if (ints != metadataCapacity_) {
    metadataCapacity_ = 0;
    metadata_.reset();
    metadata_ = DeviceMemory(ints * sizeof(int32_t), site, "step metadata");
    metadata = metadata_.as<int32_t>();
    staging_.reset();
    staging_ = PinnedMemory(ints * sizeof(int32_t), site, "step metadata staging");
    stagedMetadata = static_cast<int32_t*>(staging_.get());
    metadataCapacity_ = ints;
    moved = true;
  }
  return moved;
}

size_t CudaWorkspace::bytes() const {
  return activations_.bytes() + attention_.bytes() + logits_.bytes() + metadata_.bytes() +
         weightHalf_.bytes() + cublas_.bytes();
}

}  // namespace ember::cuda
