#include "tokenizer/pretokenizer_rules.h"

#include <algorithm>

namespace ember::pretokenizer_rules {
namespace {

// Regexes shared by several types. Each is the split expression of its family's tokenizer.json,
// in the form llama.cpp uses (case-insensitive groups spelled out as [sS], ...).
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCjkKana = "[一-龥぀-ゟ゠-ヿ]+";
constexpr std::string_view kBloom = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
constexpr std::string_view kNewlineRuns = R"([^\n]+|[\n]+)";
// Runs of digits cut into groups of three from the right; the text before a run joins its first
// group (llama.cpp's hand-written digit splitter for afmoe and tiny_aya behaves so).
constexpr std::string_view kDigitsFromRight = R"(\P{N}*+\p{N}{1,3}(?=(?:\p{N}{3})*+(?!\p{N})))";
constexpr std::string_view kCaseWords =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCaseWordsWithMarks =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kAyaWords =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<SplitRules> makeTypes() {
  const std::string_view deepseek3Words =
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
      "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
  const std::string_view spark25Words =
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
      "| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+";
  const std::string_view afmoeWords =
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
      "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  return {
      // llama.cpp's rules for a BPE vocabulary without a pre-tokenizer name.
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
      {"gpt2", {kGpt2}},
      {"llama3", {kLlama3}},
      {"jais2",
       {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})"}},
      {"deepseek-llm",
       {"[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", R"(\p{N}+)"}},
      {"deepseek3-llm", {R"(\p{N}{1,3})", kCjkKana, deepseek3Words}},
      {"spark2_5", {R"(\p{N}{1,3})", kCjkKana, spark25Words, R"(\p{N})"}},
      {"youtu",
       {"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
        R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"deepseek-coder",
       {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", "[一-龥ࠀ-一가-퟿]+", R"(\p{N})"}},
      {"falcon", {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
      {"starcoder", {R"(\p{N})", kGpt2}},
      {"qwen2", {kQwen2}},
      {"qwen35",
       {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"bloom", {kBloom}},
      {"viking", {kBloom, R"(\p{N})"}},
      {"tekken",
       {R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"chameleon",
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
        R"(\p{N})", R"([\p{P}!-/:-@\[-`{-~])", kGpt2}},
      {"gpt4o", {kCaseWords}},
      {"granite-emb-multi", {kCaseWordsWithMarks}},
      {"tiny-aya", {kDigitsFromRight, kAyaWords}},
      {"superbpe", {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"}},
      {"bailingmoe",
       {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {"seed-coder",
       {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"ufakzeka",
       {R"([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"afmoe",
       {kDigitsFromRight,
        "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+", afmoeWords}},
      {"laguna", {kNewlineRuns, kQwen2}},
      {"exaone-moe",
       {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      // SentencePiece-style BPE: spaces become U+2581, merges run over raw UTF-8 lines.
      {"gemma4", {kNewlineRuns}, false, true, true},
      {"sarvam-moe", {kNewlineRuns}, false, true, false},
      {"minicpm5",
       {R"(\p{N}{1,3})",
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"whitespace", {R"(\S+)"}, false},
      // Kimi K2: the Llama 3 expression with Han characters (llama.cpp's ranges: the CJK unified
      // ideographs, extensions A-F and the compatibility ideographs) taken out of the letters
      // and kept as runs of their own, as llama.cpp's hand-written Kimi K2 splitter does.
      {"kimi-k2",
       {R"([\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{F900}-\x{FAFF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{2F800}-\x{2FA1F}]+|[^\r\n\p{L}\p{N}]?(?:(?![\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{F900}-\x{FAFF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{2F800}-\x{2FA1F}])\p{L})+(?:'[sStTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
  };
}

// tokenizer.ggml.pre -> type, as llama.cpp's llama_vocab::load maps them.
std::vector<PreName> makeNames() {
  std::vector<PreName> names;
  const auto add = [&](std::string_view type, std::initializer_list<std::string_view> values,
                       bool ignoreMerges = false) {
    for (std::string_view v : values) names.push_back({v, type, ignoreMerges});
  };
  add("default", {"default"});
  add("llama3", {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                 "lfm2", "jina-v5-nano"},
      true);
  add("minicpm5", {"minicpm5"}, true);
  add("deepseek-llm", {"deepseek-llm"});
  add("deepseek-coder", {"deepseek-coder"});
  add("deepseek3-llm", {"deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"});
  add("spark2_5", {"spark2_5"});
  add("youtu", {"youtu"}, true);
  add("falcon", {"falcon"});
  add("gpt2", {"mpt", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
               "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code",
               "roberta-bpe", "olmo", "jais", "exaone4", "trillion", "granite-docling"});
  add("starcoder", {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone",
                    "minerva-7b", "mellum2"});
  add("jais2", {"jais-2"});
  add("gemma4", {"gemma4", "granite-embed-multi-311m"});
  add("sarvam-moe", {"sarvam-moe"});
  add("whitespace", {"whitespace"});
  add("qwen2", {"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "megrez", "hunyuan",
                "solar-open", "grok-2"});
  add("qwen35", {"qwen35"});
  add("llama3", {"dbrx", "smaug-bpe", "chatglm-bpe"});
  add("llama3", {"glm4", "glm5"}, true);  // llama.cpp's chatglm4 type: the Llama 3 regex
  add("bloom", {"poro-chat", "bloom", "gpt3-finnish"});
  add("viking", {"viking"});
  add("tekken", {"tekken"}, true);
  add("chameleon", {"chameleon"});
  add("gpt4o", {"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"});
  add("granite-emb-multi", {"granite-embed-multi-97m"}, true);
  add("tiny-aya", {"tiny_aya", "cohere2moe"});
  add("superbpe", {"superbpe"});
  add("bailingmoe", {"bailingmoe", "bailingmoe2", "llada-moe"});
  add("seed-coder", {"seed-coder"});
  add("ufakzeka", {"ufakzeka"});
  add("afmoe", {"afmoe"});
  add("laguna", {"laguna"});
  add("exaone-moe", {"exaone-moe"});
  add("kimi-k2", {"kimi-k2"});
  return names;
}

}  // namespace

const std::vector<SplitRules>& allTypes() {
  static const std::vector<SplitRules> types = makeTypes();
  return types;
}

const std::vector<PreName>& allNames() {
  static const std::vector<PreName> names = makeNames();
  return names;
}

const SplitRules* findType(std::string_view type) {
  const auto& types = allTypes();
  const auto it = std::find_if(types.begin(), types.end(),
                               [&](const SplitRules& r) { return r.type == type; });
  return it == types.end() ? nullptr : &*it;
}

const PreName* findName(std::string_view name) {
  const auto& names = allNames();
  const auto it =
      std::find_if(names.begin(), names.end(), [&](const PreName& n) { return n.name == name; });
  return it == names.end() ? nullptr : &*it;
}

}  // namespace ember::pretokenizer_rules
