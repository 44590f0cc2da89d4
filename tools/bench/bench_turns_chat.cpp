// The synthetic chat that ttft-turns replays, and its prompts as the engine tokenizes them.
#include <array>
#include <fstream>

#include "bench_turns.h"
#include "ember/error.h"
#include "ember/prompt_formatter.h"
#include "ember/rng.h"

namespace ember::bench {
namespace {

template <size_t N>
const char* pick(const std::array<const char*, N>& words, Xoshiro256StarStar& rng) {
  return words[rng.next() % N];
}

constexpr std::array<const char*, 16> kSubjects = {
    "the new intern", "our team lead",   "the old server", "my neighbour",
    "the project",    "the small shop",  "this report",    "the city council",
    "a friend of mine", "the kitchen crew", "the night train", "the weekly meeting",
    "the garden club", "the support desk", "the budget",      "the school library"};
constexpr std::array<const char*, 16> kVerbs = {
    "needs",   "moved",     "changed", "found",   "asked about", "forgot",
    "planned", "finished",  "checked", "ignored", "repaired",    "described",
    "brought", "postponed", "shared",  "questioned"};
constexpr std::array<const char*, 16> kObjects = {
    "the schedule for next week", "a cheaper supplier",   "the broken printer",
    "the notes from Tuesday",     "a longer lunch break", "the quarterly numbers",
    "the map of the campus",      "a quiet place to work", "the list of open tasks",
    "the invoice from March",     "a better way to test", "the spare keys",
    "the slides for the talk",    "the parking rules",    "a new coffee machine",
    "the feedback form"};
constexpr std::array<const char*, 12> kEndings = {
    "before the holidays", "without telling anyone", "after a long discussion",
    "in the morning",      "for the second time",   "because of the rain",
    "as we had hoped",     "at the last minute",    "with some help",
    "earlier than usual",  "on a Friday",           "for reasons nobody knows"};
constexpr std::array<const char*, 8> kKorean = {
    "오늘 회의에서 다음 주 일정을 다시 정하기로 했습니다.",
    "이 문제를 어떻게 해결하면 좋을지 잘 모르겠어요.",
    "지난번에 말씀하신 자료를 아직 찾지 못했습니다.",
    "날씨가 좋아서 점심은 밖에서 먹기로 했어요.",
    "새로 온 동료가 질문이 많아서 설명을 자세히 해 주었습니다.",
    "보고서의 숫자가 서로 맞지 않는 것 같아요.",
    "주말 동안 서버가 두 번이나 멈췄습니다.",
    "간단하게 요약해서 알려 주시면 감사하겠습니다."};

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string englishSentence(Xoshiro256StarStar& rng) {
  std::string s = capitalized(pick(kSubjects, rng));
  s += ' ';
  s += pick(kVerbs, rng);
  s += ' ';
  s += pick(kObjects, rng);
  s += ' ';
  s += pick(kEndings, rng);
  s += rng.next() % 5 == 0 ? "?" : ".";
  return s;
}

}  // namespace

SyntheticChat makeSyntheticChat(int turns, int userTokens, int answerTokens, uint64_t seed,
                                const TokenCounter& countTokens) {
  SyntheticChat chat;
  chat.system =
      "You are a patient assistant for a small team. Answer in plain words, keep the answers "
      "short, and say so when you are not sure. Reply in the language of the question.";
  Xoshiro256StarStar rng(seed);
  // Sentences are added until the text reaches its target length in this model's tokens.
  auto grow = [&](size_t target, bool korean) {
    std::string text = korean ? pick(kKorean, rng) : "";
    while (countTokens(text) < target) {
      if (!text.empty()) text += ' ';
      text += englishSentence(rng);
    }
    return text;
  };
  for (int t = 0; t < turns; ++t) {
    chat.user.push_back(grow(static_cast<size_t>(userTokens), t % 3 == 1));  // turns 2, 5, 8
    chat.assistant.push_back(grow(static_cast<size_t>(answerTokens), false));
  }
  return chat;
}

nlohmann::ordered_json turnMessages(const SyntheticChat& chat, int turn) {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  messages.push_back({{"role", "system"}, {"content", chat.system}});
  for (int t = 0; t <= turn; ++t) {
    messages.push_back({{"role", "user"}, {"content", chat.user[static_cast<size_t>(t)]}});
    if (t < turn)
      messages.push_back(
          {{"role", "assistant"}, {"content", chat.assistant[static_cast<size_t>(t)]}});
  }
  return messages;
}

size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

ReplayedChat buildReplayedChat(const std::string& modelPath, int turns, uint64_t seed) {
  const auto formatter = PromptFormatter::open(modelPath);
  ReplayedChat replay;
  replay.chat = makeSyntheticChat(turns, 150, 60, seed, [&](const std::string& text) {
    return formatter->encodeText(text).size();
  });
  for (int t = 0; t < turns; ++t) {
    GenerationRequest request;
    request.messages = turnMessages(replay.chat, t);
    // The same builder Engine::addRequest uses; no context limit here (the caller checks).
    replay.prompts.push_back(formatter->promptTokens(request));
  }
  return replay;
}

void writeTurnsJson(const std::string& path, const std::string& modelPath,
                    const ReplayedChat& replay) {
  nlohmann::ordered_json j;
  j["model"] = modelPath;
  j["turns"] = nlohmann::ordered_json::array();
  for (size_t t = 0; t < replay.prompts.size(); ++t)
    j["turns"].push_back({{"turn", t + 1},
                          {"tokens", replay.prompts[t]},
                          {"messages", turnMessages(replay.chat, static_cast<int>(t))}});
  std::ofstream out(path);
  out << j.dump() << "\n";
  if (!out) throw Error("cannot write the turns to '" + path + "'");
}

}  // namespace ember::bench
