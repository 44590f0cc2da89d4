#include "gguf/ggml_types.h"

#include <array>

namespace ember::gguf {

namespace {

struct TypeEntry {
  uint32_t id;
  GgmlTypeTraits traits;
};

// Block layouts of ggml's tensor types (elements per block, bytes per block). Ids missing here
// (4, 5, 31-33, 36-38) belonged to layouts ggml has removed; files using them are rejected.
constexpr std::array kTypes = {
    TypeEntry{0, {"F32", 1, 4}},         TypeEntry{1, {"F16", 1, 2}},
    TypeEntry{2, {"Q4_0", 32, 18}},      TypeEntry{3, {"Q4_1", 32, 20}},
    TypeEntry{6, {"Q5_0", 32, 22}},      TypeEntry{7, {"Q5_1", 32, 24}},
    TypeEntry{8, {"Q8_0", 32, 34}},      TypeEntry{9, {"Q8_1", 32, 36}},
    TypeEntry{10, {"Q2_K", 256, 84}},    TypeEntry{11, {"Q3_K", 256, 110}},
    TypeEntry{12, {"Q4_K", 256, 144}},   TypeEntry{13, {"Q5_K", 256, 176}},
    TypeEntry{14, {"Q6_K", 256, 210}},   TypeEntry{15, {"Q8_K", 256, 292}},
    TypeEntry{16, {"IQ2_XXS", 256, 66}}, TypeEntry{17, {"IQ2_XS", 256, 74}},
    TypeEntry{18, {"IQ3_XXS", 256, 98}}, TypeEntry{19, {"IQ1_S", 256, 50}},
    TypeEntry{20, {"IQ4_NL", 32, 18}},   TypeEntry{21, {"IQ3_S", 256, 110}},
    TypeEntry{22, {"IQ2_S", 256, 82}},   TypeEntry{23, {"IQ4_XS", 256, 136}},
    TypeEntry{24, {"I8", 1, 1}},         TypeEntry{25, {"I16", 1, 2}},
    TypeEntry{26, {"I32", 1, 4}},        TypeEntry{27, {"I64", 1, 8}},
    TypeEntry{28, {"F64", 1, 8}},        TypeEntry{29, {"IQ1_M", 256, 56}},
    TypeEntry{30, {"BF16", 1, 2}},       TypeEntry{34, {"TQ1_0", 256, 54}},
    TypeEntry{35, {"TQ2_0", 256, 66}},   TypeEntry{39, {"MXFP4", 32, 17}},
    TypeEntry{40, {"NVFP4", 64, 36}},    TypeEntry{41, {"Q1_0", 128, 18}},
};

}  // namespace

std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t typeId) {
  for (const TypeEntry& entry : kTypes)
    if (entry.id == typeId) return entry.traits;
  return std::nullopt;
}

std::string_view ggmlTypeName(GgmlType type) {
  const auto traits = ggmlTypeTraits(static_cast<uint32_t>(type));
  return traits ? traits->name : std::string_view("unknown");
}

}  // namespace ember::gguf
