#pragma once
// message_stats columns and their keys in the JSON export, in one place for export and import.
namespace ember::chatexport {

enum class ColumnType { Real, Integer, Text, Json, Seed };

struct StatsColumn {
  const char* column;
  const char* key;
  ColumnType type;
};

inline constexpr StatsColumn kStatsColumns[] = {
    {"queue_wait_ms", "queueWaitMs", ColumnType::Real},
    {"tokenize_ms", "tokenizeMs", ColumnType::Real},
    {"prefill_ms", "prefillMs", ColumnType::Real},
    {"prefill_tokens_per_second", "prefillTokensPerSecond", ColumnType::Real},
    {"ttft_ms", "ttftMs", ColumnType::Real},
    {"itl_p50_ms", "itlP50Ms", ColumnType::Real},
    {"itl_p95_ms", "itlP95Ms", ColumnType::Real},
    {"itl_max_ms", "itlMaxMs", ColumnType::Real},
    {"decode_tokens_per_second", "decodeTokensPerSecond", ColumnType::Real},
    {"total_ms", "totalMs", ColumnType::Real},
    {"prompt_tokens", "promptTokens", ColumnType::Integer},
    {"cached_tokens", "cachedTokens", ColumnType::Integer},
    {"generated_tokens", "generatedTokens", ColumnType::Integer},
    {"finish_reason", "finishReason", ColumnType::Text},
    {"sampling", "sampling", ColumnType::Json},
    {"seed", "seed", ColumnType::Seed},  // the 64 bits of an unsigned seed in a signed column
    {"model", "model", ColumnType::Text},
    {"backend", "backend", ColumnType::Text},
    {"token_times_ms", "tokenTimesMs", ColumnType::Json},
};

}  // namespace ember::chatexport
