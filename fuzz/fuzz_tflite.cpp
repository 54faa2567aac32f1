// libFuzzer target: TFLite flatbuffers -> importTfliteModel, and the imported model through
// the driver's validation. Any outcome but a crash, a sanitizer report or a hang is fine.
#include <cstdint>

#include "hal/validation.h"
#include "nnhal/tflite_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto imported = nnhal::importTfliteModel({data, size});
  if (imported) (void)nnhal::hal::validateModel(imported->model);
  return 0;
}
