#pragma once
// Float rows to GGUF weight blocks, for the synthetic models (random weights in a real model's
// shapes). Layouts are ggml's (see backend/cpu/quant/block_formats.h):
//   Q4_0: f16 d; u8 qs[16]  with d = m / -8 where m is the element of largest magnitude (sign
//         kept), q = clamp(round(x / d) + 8, 0, 15); element j in the low nibble of qs[j],
//         element j + 16 in the high nibble.
//   Q8_0: f16 d; i8 qs[32]  with d = max|x| / 127, q = round(x / d).
//   MXFP4: u8 e; u8 qs[16]  with e = floor(log2(max|x|)) - 2 + 127 and each q the nearest doubled
//         E2M1 value times 2^(e - 128) (gpt-oss's expert format, as gguf-py quantizes it).
//   F16:  IEEE half, rounded to nearest even.
#include <cstdint>

#include "gguf/ggml_types.h"

namespace ember::model {

// Encodes `count` floats (a multiple of the type's block size) as `type` (Q4_0, Q8_0, MXFP4, F16
// or F32) into `out`, which holds count / blockSize * typeSize bytes. Throws ember::Error for any
// other type or a count that is not a whole number of blocks.
void quantizeRow(gguf::GgmlType type, const float* x, int64_t count, uint8_t* out);

// Bytes a row of `count` elements of `type` takes.
uint64_t rowBytes(gguf::GgmlType type, int64_t count);

}  // namespace ember::model
