#pragma once
// The Backend interface: what the runtime asks of a compute device. One forward() call runs one
// engine step over a batch that mixes prompt chunks and decode tokens of several sequences; each
// sequence's keys and values live in fixed-size KV blocks named by its block table. The CPU
// backend implements it now, the CUDA backend later; the runtime never sees which.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ember {

using TokenId = int32_t;

// One sequence's part of a step.
struct BatchSequence {
  int32_t firstToken = 0;  // index of its first token in ForwardBatch::tokens
  int32_t tokenCount = 0;  // tokens of this sequence in this step (a prompt chunk, or 1)
  int32_t startPosition = 0;  // position of the first of them (= tokens already in its KV)
  std::span<const int32_t> blockTable;  // KV block ids, covering startPosition + tokenCount
  // Which logits to return: none (a prompt chunk that does not end the prompt), the last token's
  // (sampling), or every token's (ember-cli logits, fidelity tests).
  enum class Logits : uint8_t { None, Last, All } logits = Logits::Last;
};

struct ForwardBatch {
  std::span<const TokenId> tokens;        // (T) all tokens of the step, sequence after sequence
  std::span<const BatchSequence> sequences;
};

struct ForwardOutput {
  // (R, vocab): one row per requested logit, in sequence order (All: tokenCount rows).
  std::vector<float> logits;
  size_t rows = 0;
};

struct KvCacheShape {
  int32_t blockSize = 16;  // tokens per block
  int32_t blockCount = 0;  // blocks in the pool
  // Positions one sequence may reach (the engine's context length; 0: not said). LongRoPE models
  // take their long RoPE factors when it exceeds the original context, as llama.cpp does.
  int32_t contextLength = 0;
};

struct BackendMemoryInfo {
  size_t weightBytes = 0;
  size_t kvCacheBytes = 0;
  size_t workspaceBytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda:0 (NVIDIA H200)"
  virtual BackendMemoryInfo memoryInfo() const = 0;
  // Bytes of KV cache one block takes (all layers, keys and values).
  virtual size_t kvBytesPerBlock(int32_t blockSize) const = 0;
  // (Re)allocates the KV block pool; block contents are undefined afterwards.
  virtual void allocateKvCache(const KvCacheShape& shape) = 0;
  virtual const KvCacheShape& kvCacheShape() const = 0;
  // Runs the model over the batch: writes each token's keys/values into its sequence's blocks
  // at its position, and returns the requested logits. Throws ember::Error on failure.
  virtual void forward(const ForwardBatch& batch, ForwardOutput& out) = 0;
  virtual size_t vocabSize() const = 0;
  // Optional: copy one block's contents to another (copy-on-write for forks). Default: none.
  virtual bool copyBlock(int32_t /*from*/, int32_t /*to*/) { return false; }
  // Optional (host-RAM spill of cached blocks): one block's keys and values across all layers
  // as kvBytesPerBlock bytes (per layer: keys, then values), read out or written back. False
  // when the backend cannot (or the block or size is wrong).
  virtual bool readKvBlock(int32_t /*block*/, std::span<std::byte> /*out*/) { return false; }
  virtual bool writeKvBlock(int32_t /*block*/, std::span<const std::byte> /*in*/) { return false; }
  // Optional: bytes of device memory free now (the engine checks the KV pool fits before
  // allocating it). nullopt: the backend does not know (the CPU backend, whose weights are a
  // file mapping and whose pool comes from ordinary RAM), and no check is made.
  virtual std::optional<uint64_t> freeMemoryBytes() const { return std::nullopt; }
};

}  // namespace ember
