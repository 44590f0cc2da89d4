#include "runtime/engine/model_runner.h"

namespace ember {

void ModelRunner::execute(std::span<const ScheduledWork> plan) {
  tokens_.clear();
  sequences_.clear();
  rowOf_.clear();
  int32_t rows = 0;
  for (const ScheduledWork& work : plan) {
    const Sequence& s = *work.sequence;
    BatchSequence b;
    b.firstToken = static_cast<int32_t>(tokens_.size());
    b.tokenCount = work.tokenCount;
    b.startPosition = s.computed;
    b.blockTable = s.blockTable;
    // Logits when the work reaches the last token (ends the prompt, or decodes).
    const bool endsPrompt =
        s.computed + work.tokenCount >= static_cast<int32_t>(s.tokens.size());
    b.logits = endsPrompt ? BatchSequence::Logits::Last : BatchSequence::Logits::None;
    rowOf_.push_back(endsPrompt ? rows++ : -1);
    tokens_.insert(tokens_.end(), s.tokens.begin() + s.computed,
                   s.tokens.begin() + s.computed + work.tokenCount);
    sequences_.push_back(b);
  }
  backend_.forward(ForwardBatch{tokens_, sequences_}, output_);
}

std::span<const float> ModelRunner::logitsFor(size_t planIndex) const {
  const int32_t row = rowOf_[planIndex];
  if (row < 0) return {};
  const size_t vocab = backend_.vocabSize();
  return std::span<const float>(output_.logits).subspan(static_cast<size_t>(row) * vocab, vocab);
}

void ModelRunner::scoreAll(std::span<const TokenId> tokens, std::span<const int32_t> blockTable,
                           std::vector<float>& logits) {
  BatchSequence b;
  b.tokenCount = static_cast<int32_t>(tokens.size());
  b.blockTable = blockTable;
  b.logits = BatchSequence::Logits::All;
  backend_.forward(ForwardBatch{tokens, std::span<const BatchSequence>(&b, 1)}, output_);
  logits.assign(output_.logits.begin(),
                output_.logits.begin() + static_cast<ptrdiff_t>(tokens.size() * backend_.vocabSize()));
}

}  // namespace ember
