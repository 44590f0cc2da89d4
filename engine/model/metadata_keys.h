#pragma once
// Typed access to the `<arch>.*` metadata keys of a model file, with errors that name the file,
// the key and why it is needed. Used only while reading a ModelConfig.
#include <cstdint>
#include <optional>
#include <string>

namespace ember::gguf {
class GgufFile;
}

namespace ember::model {

class MetadataKeys {
 public:
  MetadataKeys(const gguf::GgufFile& file, std::string architecture);

  const gguf::GgufFile& file() const { return file_; }
  // "<arch>.<suffix>"
  std::string key(const std::string& suffix) const { return architecture_ + "." + suffix; }

  // Integer keys may also be per-layer arrays in GGUF; we accept an array only when all its
  // elements are equal (we do not run models whose layers differ in shape) and return that value.
  int64_t requiredInt(const std::string& suffix) const;
  std::optional<int64_t> optionalInt(const std::string& suffix) const;
  float requiredFloat(const std::string& suffix) const;
  std::optional<float> optionalFloat(const std::string& suffix) const;
  std::optional<std::string> optionalString(const std::string& suffix) const;

  // Throws ModelConfigError "<file>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const gguf::GgufFile& file_;
  std::string architecture_;
};

}  // namespace ember::model
