#pragma once
// Parses the GGUF tensor table and places each tensor in the data section. Internal to the reader.
#include <cstdint>
#include <span>
#include <vector>

#include "gguf/byte_cursor.h"
#include "gguf/gguf_file.h"

namespace ember::gguf {

inline constexpr uint32_t kMaxTensorDims = 4;
// Smallest possible tensor info: name length, a 1-byte name, n_dims, one dim, type, offset.
inline constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

struct ParsedTensor {
  TensorInfo info;
  uint64_t entryOffset = 0;        // where the tensor info starts
  uint64_t offsetFieldOffset = 0;  // where its data offset is stored
};

// Reads `count` tensor infos at the cursor (the count must already be bounded by the caller).
std::vector<ParsedTensor> parseTensorTable(ByteCursor& cursor, uint64_t count);

// Checks each tensor's offset (aligned, inside the file) and sets its data view. `image` is the
// whole file; the data section starts at `dataOffset`.
void placeTensors(std::vector<ParsedTensor>& tensors, const ByteCursor& cursor,
                  std::span<const uint8_t> image, uint64_t dataOffset, uint64_t alignment);

}  // namespace ember::gguf
