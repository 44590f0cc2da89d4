#pragma once
// Overflow-checked unsigned arithmetic for sizes and offsets read from untrusted files.
// Each returns nullopt instead of wrapping around.
#include <cstdint>
#include <optional>

namespace ember {

inline std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

inline std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// Rounds `value` up to a multiple of `alignment` (a non-zero power of two); nullopt on overflow.
inline std::optional<uint64_t> alignUp(uint64_t value, uint64_t alignment) {
  const auto bumped = checkedAdd(value, alignment - 1);
  if (!bumped) return std::nullopt;
  return *bumped & ~(alignment - 1);
}

inline bool isPowerOfTwo(uint64_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

}  // namespace ember
