#pragma once
// A seeded pseudo-random generator that gives the same stream on every platform and compiler, so
// that the same seed and settings give the same text everywhere. The standard library's engines
// are portable but its distributions (uniform_real_distribution, discrete_distribution) are not,
// so the [0, 1) conversion is ours too.
//
// Algorithms (by Sebastiano Vigna and David Blackman, https://prng.di.unimi.it/):
//   splitmix64   expands one 64-bit seed into the 256-bit state, as its authors recommend;
//   xoshiro256** produces the stream.
#include <array>
#include <cstdint>

namespace ember {

// One step of splitmix64 on `state`: advances it and returns the next output.
uint64_t splitMix64Next(uint64_t& state);

class Xoshiro256StarStar {
 public:
  // The state is filled with four successive splitmix64 outputs of `seed`; never all zero.
  explicit Xoshiro256StarStar(uint64_t seed);
  // Sets the raw state directly (used to check against the published reference outputs). The
  // state must not be all zero.
  static Xoshiro256StarStar fromState(const std::array<uint64_t, 4>& state);

  uint64_t next();
  // Uniform in [0, 1) with 53 random bits: the top 53 bits of next() times 2^-53.
  double nextDouble();
  // Uniform in [0, 1) with 24 random bits: the top 24 bits of next() times 2^-24.
  float nextFloat();

 private:
  Xoshiro256StarStar() = default;
  std::array<uint64_t, 4> state_{};
};

// A seed from the operating system's entropy source, for requests that did not give one.
uint64_t randomSeed();

}  // namespace ember
