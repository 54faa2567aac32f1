// TFLite FLOOR_DIV and GATHER_ND import as operations of the org.nnhal.tflite_compat
// extension only when the device reports it (ImportOptions::extensions); otherwise they are
// refused by name. Also MoveNet single-pose, which needs exactly these two.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "hal/tflite_test_model.h"
#include "hal/tflite_test_util.h"
#include "nnhal/tflite_compat_extension.h"
#include "nnhal/tflite_import.h"
#include "tflite_schema_generated.h"

// Tensor specs below name only the fields they need; g++ 12 warns about the others.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace nnhal {
namespace {

using namespace nnhal::testing;  // NOLINT(google-build-using-namespace): test helpers
namespace lite = ::tflite;
using Spec = TfliteModelMaker::TensorSpec;

ImportOptions withExtension() { return {.extensions = {tflite_compat::describe()}}; }

/// q = FLOOR_DIV(a [2, 1] int32, 4 (a constant scalar)); out = GATHER_ND(params [3, 2] int8,
/// q as indices [2, 1]): out [2, 2].
std::vector<uint8_t> floorDivThenGatherNd() {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {2, 1}, .type = lite::TensorType_INT32, .name = "a"});
  const int32_t four = m.addConstant<int32_t>({.shape = {}, .type = lite::TensorType_INT32}, {4});
  const int32_t q = m.addTensor({.shape = {2, 1}, .type = lite::TensorType_INT32, .name = "q"});
  const int32_t params = m.addTensor({.shape = {3, 2},
                                      .type = lite::TensorType_INT8,
                                      .name = "params",
                                      .scales = {0.5f},
                                      .zeroPoints = {-1}});
  const int32_t out = m.addTensor({.shape = {2, 2},
                                   .type = lite::TensorType_INT8,
                                   .name = "out",
                                   .scales = {0.5f},
                                   .zeroPoints = {-1}});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_FLOOR_DIV), {a, four}, {q});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_GATHER_ND), {params, q}, {out});
  return m.finish({a, params}, {out});
}

TEST(TfliteExtensionImportTest, MapsToTheExtensionWhenTheDeviceReportsIt) {
  auto imported = importTfliteModel(floorDivThenGatherNd(), withExtension());
  ASSERT_TRUE(imported) << imported.error().message;
  const Model& model = imported->model;
  expectConsistent(model);
  expectValid(model);
  ASSERT_EQ(model.extensionNameToPrefix.size(), 1u);
  EXPECT_EQ(model.extensionNameToPrefix[0].name, "org.nnhal.tflite_compat");
  EXPECT_EQ(model.extensionNameToPrefix[0].prefix, 1);
  ASSERT_EQ(model.main.operations.size(), 2u);
  const Operation& floorDiv = model.main.operations[0];
  const Operation& gatherNd = model.main.operations[1];
  EXPECT_EQ(static_cast<uint32_t>(floorDiv.type), 0x00010000u);
  EXPECT_EQ(static_cast<uint32_t>(gatherNd.type), 0x00010001u);
  ASSERT_EQ(floorDiv.inputs.size(), 2u);
  // The scalar divisor became a [1] constant holding 4, as every scalar constant does.
  EXPECT_EQ(model.main.operands[floorDiv.inputs[1]].dimensions, std::vector<uint32_t>{1});
  EXPECT_EQ(int32Vector(model, floorDiv.inputs[1]), std::vector<int32_t>{4});
  ASSERT_EQ(gatherNd.inputs.size(), 2u);
  EXPECT_EQ(gatherNd.inputs[1], floorDiv.outputs[0]);
  EXPECT_EQ(model.main.operands[gatherNd.inputs[0]].type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
}

TEST(TfliteExtensionImportTest, Int32ReshapeAndConcatenationUseTheExtensionWhenReported) {
  auto build = [] {
    TfliteModelMaker m;
    const int32_t a = m.addTensor({.shape = {1, 2}, .type = lite::TensorType_INT32});
    const int32_t flat = m.addTensor({.shape = {2}, .type = lite::TensorType_INT32});
    const int32_t shape =
        m.addConstant<int32_t>({.shape = {1}, .type = lite::TensorType_INT32}, {2});
    const int32_t joined = m.addTensor({.shape = {4}, .type = lite::TensorType_INT32});
    m.addOperator(m.addOperatorCode(lite::BuiltinOperator_RESHAPE), {a, shape}, {flat});
    m.addOperator(m.addOperatorCode(lite::BuiltinOperator_CONCATENATION), {flat, flat}, {joined},
                  lite::BuiltinOptions_ConcatenationOptions,
                  lite::CreateConcatenationOptions(m.fbb(), 0).Union());
    return m.finish({a}, {joined});
  };
  auto with = importTfliteModel(build(), withExtension());
  ASSERT_TRUE(with) << with.error().message;
  expectValid(with->model);
  ASSERT_EQ(with->model.main.operations.size(), 2u);
  EXPECT_EQ(with->model.main.operations[0].type,
            tflite_compat::operationType(1, tflite_compat::Operation::RESHAPE));
  EXPECT_EQ(with->model.main.operations[1].type,
            tflite_compat::operationType(1, tflite_compat::Operation::CONCATENATION));
  // Without the extension they stay base operations, which validation refuses for INT32.
  auto without = importTfliteModel(build());
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_EQ(without->model.main.operations[0].type, OperationType::RESHAPE);
  EXPECT_TRUE(without->model.extensionNameToPrefix.empty());
}

// MoveNet's input: raw uint8 pixels without quantization, read by CAST. As the delegate does
// for every 8-bit tensor of scale 0, it gets scale 1 (CAST converts values, not real numbers).
TEST(TfliteExtensionImportTest, UnquantizedUint8ReadByCastGetsScaleOne) {
  TfliteModelMaker m;
  const int32_t pixels = m.addTensor({.shape = {1, 2}, .type = lite::TensorType_UINT8});
  const int32_t values = m.addTensor({.shape = {1, 2}});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_CAST), {pixels}, {values});
  auto imported = importTfliteModel(m.finish({pixels}, {values}));
  ASSERT_TRUE(imported) << imported.error().message;
  expectValid(imported->model);
  const Operand& input = imported->model.main.operands[imported->model.main.inputIndexes[0]];
  EXPECT_EQ(input.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_EQ(input.scale, 1.0f);
  EXPECT_EQ(input.zeroPoint, 0);
}

TEST(TfliteExtensionImportTest, RefusesByNameWithoutTheExtension) {
  for (const ImportOptions& options :
       {ImportOptions{}, ImportOptions{.extensions = {Extension{.name = "com.example.other"}}}}) {
    expectInvalid(importTfliteModel(floorDivThenGatherNd(), options),
                  "unsupported TFLite operator FLOOR_DIV (builtin code 90) (an operation of "
                  "extension org.nnhal.tflite_compat, which the device does not report) at "
                  "operator 0; unsupported TFLite operator GATHER_ND (builtin code 107) (an "
                  "operation of extension org.nnhal.tflite_compat, which the device does not "
                  "report) at operator 1");
  }
}

TEST(TfliteExtensionImportTest, RefusesWrongOperandCounts) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {2}, .type = lite::TensorType_INT32});
  const int32_t out = m.addTensor({.shape = {2}, .type = lite::TensorType_INT32});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_GATHER_ND), {a}, {out});
  expectInvalid(importTfliteModel(m.finish({a}, {out}), withExtension()),
                "TFLite operator 0 (GATHER_ND): has 1 inputs; expected 2");
}

TEST(TfliteExtensionImportTest, MoveNetImportsWithTheExtensionOnly) {
  const auto path = kModels / "movenet_single_pose_lightning_ptq.tflite";
  expectInvalid(importTfliteFile(path), "unsupported TFLite operator FLOOR_DIV");
  auto imported = importTfliteFile(path, withExtension());
  ASSERT_TRUE(imported) << imported.error().message;
  expectValid(imported->model);
  std::map<tflite_compat::Operation, int> counts;
  for (const Operation& operation : imported->model.main.operations) {
    const auto code = static_cast<uint32_t>(operation.type);
    if (code > 0xFFFFu) {
      EXPECT_EQ(extensionPrefixOf(code), 1);
      ++counts[static_cast<tflite_compat::Operation>(extensionTypeOf(code))];
    }
  }
  // FLOOR_DIV x2, GATHER_ND x4; the int32 index path's RESHAPE x4 and CONCATENATION x3 (one
  // CONCATENATION operator and two PACKs), which the base operations refuse for TENSOR_INT32.
  EXPECT_EQ(counts[tflite_compat::Operation::FLOOR_DIV], 2);
  EXPECT_EQ(counts[tflite_compat::Operation::GATHER_ND], 4);
  EXPECT_EQ(counts[tflite_compat::Operation::RESHAPE], 4);
  EXPECT_EQ(counts[tflite_compat::Operation::CONCATENATION], 3);
  ASSERT_EQ(imported->inputs.size(), 1u);
  EXPECT_EQ(imported->inputs[0].dimensions, (std::vector<uint32_t>{1, 192, 192, 3}));
  ASSERT_EQ(imported->outputs.size(), 1u);
  EXPECT_EQ(imported->outputs[0].dimensions, (std::vector<uint32_t>{1, 1, 17, 3}));
}

}  // namespace
}  // namespace nnhal
