#pragma once
// Errors inside the engine are exceptions derived from ember::Error; the edges (CLI, app,
// worker thread) catch them and turn them into a message for the user. Input never aborts.
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ember
