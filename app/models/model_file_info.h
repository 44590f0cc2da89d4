#pragma once
// What the model picker shows about a GGUF file before loading it, read from its header only.
#include <QString>

namespace ember::app {

struct ModelFileInfo {
  QString path;
  QString fileName;
  QString architecture;
  qint64 parameterCount = 0;   // sum of the tensors' element counts
  QString quantization;        // the tensor type holding most of the bytes, e.g. "Q4_1"
  qint64 contextLength = 0;    // <arch>.context_length
  qint64 fileSize = 0;
  // Weights (the file is mapped whole) + the f16 KV cache (as the CPU backend keeps it) of
  // `contextLength` tokens (0: the model's, at most 4096, as the engine does) for each of
  // the engine's sequences: an estimate, close enough to decide whether it fits.
  qint64 memoryEstimate = 0;
  QString error;  // the reader's message when the file cannot be used
};

// Never throws: a bad file gives a row with `error` set.
ModelFileInfo describeModelFile(const QString& path, qint64 contextLength = 0,
                                int sequences = 4);

QString formatBytes(qint64 bytes);          // "1.2 GB", "87 MB"
QString formatParameterCount(qint64 count);  // "135M", "6.7B"

}  // namespace ember::app
