#include "gguf/tensor_table_parser.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "common/checked_math.h"

namespace ember::gguf {

namespace {

constexpr uint64_t kMaxSigned = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

std::string tensorLabel(const std::string& name) {
  return "tensor '" + name + "'";
}

std::vector<uint64_t> readShape(ByteCursor& cursor, const std::string& name) {
  const uint64_t dimsAt = cursor.position();
  const uint32_t dimCount = cursor.u32("the dimension count of " + tensorLabel(name));
  if (dimCount == 0 || dimCount > kMaxTensorDims)
    cursor.fail(dimsAt, tensorLabel(name) + " has " + std::to_string(dimCount) +
                            " dimensions (expected 1 to " + std::to_string(kMaxTensorDims) + ")");
  std::vector<uint64_t> shape;
  for (uint32_t d = 0; d < dimCount; ++d) {
    const uint64_t dimAt = cursor.position();
    const uint64_t dim = cursor.u64("dimension " + std::to_string(d) + " of " + tensorLabel(name));
    // ggml stores dimensions as int64, so anything above INT64_MAX would read as negative.
    if (dim == 0 || dim > kMaxSigned)
      cursor.fail(dimAt, "dimension " + std::to_string(d) + " of " + tensorLabel(name) + " is " +
                             std::to_string(dim) + " (expected 1 to " + std::to_string(kMaxSigned) +
                             ")");
    shape.push_back(dim);
  }
  return shape;
}

uint64_t elementCountOf(const ByteCursor& cursor, const std::vector<uint64_t>& shape,
                        const std::string& name, uint64_t at) {
  uint64_t count = 1;
  for (uint64_t dim : shape) {
    const auto product = checkedMul(count, dim);
    if (!product || *product > kMaxSigned)
      cursor.fail(at, "the element count of " + tensorLabel(name) +
                          " overflows 63 bits (expected a product of dimensions below 2^63)");
    count = *product;
  }
  return count;
}

// Returns the type id; its traits are known to exist.
uint32_t readType(ByteCursor& cursor, const std::string& name) {
  const uint64_t at = cursor.position();
  const uint32_t id = cursor.u32("the type of " + tensorLabel(name));
  const auto traits = ggmlTypeTraits(id);
  if (!traits)
    cursor.fail(at, tensorLabel(name) + " has unknown ggml type id " + std::to_string(id) +
                        " (as signed: " + std::to_string(static_cast<int32_t>(id)) +
                        "; expected a known ggml type such as F32=0, Q4_K=12)");
  return id;
}

}  // namespace

std::vector<ParsedTensor> parseTensorTable(ByteCursor& cursor, uint64_t count) {
  std::vector<ParsedTensor> tensors;
  std::set<std::string, std::less<>> names;
  for (uint64_t i = 0; i < count; ++i) {
    ParsedTensor parsed;
    parsed.entryOffset = cursor.position();
    const std::string_view rawName = cursor.string("the name of tensor " + std::to_string(i));
    TensorInfo& info = parsed.info;
    info.name = std::string(rawName);
    if (info.name.empty())
      cursor.fail(parsed.entryOffset, "tensor " + std::to_string(i) + " has an empty name");
    if (!names.insert(info.name).second)
      cursor.fail(parsed.entryOffset, "duplicate tensor name '" + info.name + "'");

    const uint64_t shapeAt = cursor.position();
    info.shape = readShape(cursor, info.name);
    info.elementCount = elementCountOf(cursor, info.shape, info.name, shapeAt);
    const uint64_t typeAt = cursor.position();
    const uint32_t typeId = readType(cursor, info.name);
    const GgmlTypeTraits traits = *ggmlTypeTraits(typeId);
    info.type = static_cast<GgmlType>(typeId);
    if (info.shape[0] % traits.blockSize != 0)
      cursor.fail(typeAt, tensorLabel(info.name) + " of type " + std::string(traits.name) +
                              " has rows of " + std::to_string(info.shape[0]) +
                              " elements (expected a multiple of its block size " +
                              std::to_string(traits.blockSize) + ")");
    // elementCount < 2^63 and typeSize <= blockSize * 8, so this cannot overflow.
    info.byteSize = info.elementCount / traits.blockSize * traits.typeSize;

    parsed.offsetFieldOffset = cursor.position();
    info.offset = cursor.u64("the data offset of " + tensorLabel(info.name));
    tensors.push_back(std::move(parsed));
  }
  return tensors;
}

void placeTensors(std::vector<ParsedTensor>& tensors, const ByteCursor& cursor,
                  std::span<const uint8_t> image, uint64_t dataOffset, uint64_t alignment) {
  const uint64_t fileSize = image.size();
  for (ParsedTensor& parsed : tensors) {
    TensorInfo& info = parsed.info;
    const uint64_t at = parsed.offsetFieldOffset;
    if (info.offset % alignment != 0)
      cursor.fail(at, "data offset " + std::to_string(info.offset) + " of " +
                          tensorLabel(info.name) +
                          " is not a multiple of the alignment (expected a multiple of " +
                          std::to_string(alignment) + ")");
    const auto start = checkedAdd(dataOffset, info.offset);
    if (!start || *start > fileSize)
      cursor.fail(at, "data offset " + std::to_string(info.offset) + " of " +
                          tensorLabel(info.name) +
                          " is past the end of the file (expected at most " +
                          std::to_string(fileSize - std::min(fileSize, dataOffset)) +
                          " from the data section at byte " + std::to_string(dataOffset) + ")");
    const auto end = checkedAdd(*start, info.byteSize);
    if (!end || *end > fileSize)
      cursor.fail(at, "data of " + tensorLabel(info.name) + " (" + std::to_string(info.byteSize) +
                          " bytes from byte " + std::to_string(*start) +
                          ") runs past the end of the file (expected the file to hold " +
                          "them, but it has " + std::to_string(fileSize) + " bytes)");
    info.data = image.subspan(*start, info.byteSize);
  }
}

}  // namespace ember::gguf
