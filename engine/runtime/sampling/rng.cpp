#include "ember/rng.h"

#include <bit>
#include <chrono>
#include <exception>
#include <random>

namespace ember {

uint64_t splitMix64Next(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;  // the golden-ratio increment
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Xoshiro256StarStar::Xoshiro256StarStar(uint64_t seed) {
  // splitmix64 is a bijection of its counter, so four consecutive outputs are never all zero.
  for (uint64_t& word : state_) word = splitMix64Next(seed);
}

Xoshiro256StarStar Xoshiro256StarStar::fromState(const std::array<uint64_t, 4>& state) {
  Xoshiro256StarStar generator;
  generator.state_ = state;
  return generator;
}

uint64_t Xoshiro256StarStar::next() {
  const uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
  const uint64_t shifted = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= shifted;
  state_[3] = std::rotl(state_[3], 45);
  return result;
}

double Xoshiro256StarStar::nextDouble() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

float Xoshiro256StarStar::nextFloat() {
  return static_cast<float>(next() >> 40) * 0x1.0p-24f;
}

uint64_t randomSeed() {
  try {
    std::random_device device;
    const uint64_t high = device();
    return (high << 32) ^ device();
  } catch (const std::exception&) {
    // No entropy source (rare, e.g. a sandbox without /dev/urandom): the clock is random enough
    // for choosing a seed, which is reported back anyway.
    uint64_t state = static_cast<uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
    return splitMix64Next(state);
  }
}

}  // namespace ember
