#pragma once
// What a backend reports while it prepares the weights at load: bytes of tensors done so far of
// the total it will prepare. The callback may throw (LoadCancelled) to stop the load; backends
// call it between tensors, never inside a parallel region, and free what they built on throw.
#include <cstdint>
#include <functional>

namespace ember {

using PrepareProgress = std::function<void(uint64_t doneBytes, uint64_t totalBytes)>;

}  // namespace ember
