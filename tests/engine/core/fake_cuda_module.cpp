// Stand-ins for libember_cuda.so that test_cuda_module opens with the loader
// (backend/cuda_module.h): built several times, one per EMBER_FAKE_MODULE_KIND:
//   1 good         this build's interface and commit; reports "no device" (never builds one)
//   2 other_abi    an interface version this Ember does not have
//   3 other_build  this interface version from a build whose interface headers differ
//   4 no_entry     a shared object without ember_cuda_module_table
// No CUDA library is linked: only the table's layout is the real one.
#include <string>

#include "backend/cuda/cuda_module_abi.h"
#include "ember/cuda_module_interface.h"
#include "ember/version.h"

#if EMBER_FAKE_MODULE_KIND != 4
namespace {

int noDevice(std::string* reason) {
  if (reason) *reason = "fake module: no device";
  return 0;
}

const ember::cuda::CudaModuleTable kTable{
#if EMBER_FAKE_MODULE_KIND == 2
    ember::cuda::kCudaModuleAbiVersion + 1,
#else
    ember::cuda::kCudaModuleAbiVersion,
#endif
    EMBER_VERSION_STRING,
#if EMBER_FAKE_MODULE_KIND == 3
    "0000000000000000",
#else
    EMBER_CUDA_INTERFACE_HASH,
#endif
    &noDevice, nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const ember::cuda::CudaModuleTable*
ember_cuda_module_table() {
  return &kTable;
}
#else
extern "C" __attribute__((visibility("default"))) int not_an_ember_module() { return 0; }
#endif
