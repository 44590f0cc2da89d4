#pragma once
// What the model picker shows about a GGUF file before loading it, read from its header only
// (the file is mapped, not read: a few milliseconds per model).
#include <QString>
#include <cstdint>
#include <functional>

namespace ember::app {

struct ModelFileInfo {
  QString path;
  QString fileName;
  QString architecture;
  qint64 parameterCount = 0;   // sum of the tensors' element counts
  QString quantization;        // the tensor type holding most of the bytes, e.g. "Q4_1"
  qint64 contextLength = 0;    // <arch>.context_length
  qint64 fileSize = 0;
  // What the memory plan needs (ember/memory_plan.h): every tensor's bytes as stored, and from
  // the configuration the engine would load it with (ember/model_file.h) the context it allows,
  // the KV bytes per token and the workspace estimate. Not configured: configError says why.
  quint64 weightBytes = 0;
  bool configured = false;
  qint64 configContext = 0;
  quint64 kvBytesPerToken = 0;
  std::function<uint64_t(int32_t stepTokens, int32_t sequences)> workspaceBytes;
  QString configError;
  QString error;  // the reader's message when the file cannot be used
};

// Never throws: a bad file gives a row with `error` set.
ModelFileInfo describeModelFile(const QString& path);

QString formatBytes(qint64 bytes);          // "1.2 GB", "87 MB"
QString formatParameterCount(qint64 count);  // "135M", "6.7B"

}  // namespace ember::app
