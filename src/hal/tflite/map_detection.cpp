// TFLite's TFLite_Detection_PostProcess custom operator as NNAPI DETECTION_POSTPROCESSING.
//
// TFLite: box encodings [1, anchors, >= 4], class predictions [1, anchors, classes + 1]
// (column 0 the background), anchors [anchors, 4] (constant), options in a flexbuffer map
// -> boxes [1, M, 4], classes [1, M], scores [1, M], count [1], all FLOAT32, with M =
// max_detections * max_classes_per_detection (fast NMS) or max_detections (regular NMS).
// NNAPI's operation takes FLOAT32 and writes scores, boxes, INT32 classes and an INT32
// count; so quantized encodings and scores are dequantized first (DEQUANTIZE), quantized
// anchors are dequantized here, and the INT32 outputs are CAST to the FLOAT32 tensors the
// TFLite file names. Class labels count from the first non-background class in both.
#include <flatbuffers/flexbuffers.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "hal/operand_utils.h"
#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

struct PostProcessOptions {
  int32_t maxDetections = 0;
  int32_t maxClassesPerDetection = 1;
  int32_t detectionsPerClass = 100;
  bool useRegularNms = false;
  float scoreThreshold = 0.0f;
  float iouThreshold = 0.0f;
  int32_t numClasses = 0;
  float yScale = 0.0f, xScale = 0.0f, hScale = 0.0f, wScale = 0.0f;
};

Result<PostProcessOptions> parseOptions(const OperatorContext& c) {
  const auto* bytes = c.op().custom_options();
  if (bytes == nullptr || bytes->size() == 0) return c.error("custom options are missing");
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(bytes->data(), bytes->size(), &reuse)) {
    return c.error("custom options are not a valid flexbuffer");
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(bytes->data(), bytes->size());
  if (!root.IsMap()) return c.error("custom options are not a flexbuffer map");
  const flexbuffers::Map map = root.AsMap();
  const auto number = [&](const char* key) -> const flexbuffers::Reference { return map[key]; };
  const auto required = [&](const char* key) -> Result<flexbuffers::Reference> {
    const flexbuffers::Reference value = number(key);
    if (!value.IsNumeric() && !value.IsBool()) {
      return c.error(std::string("custom option ") + key + " is missing or not a number");
    }
    return value;
  };
  PostProcessOptions o;
  NNHAL_ASSIGN_OR_RETURN(auto maxDetections, required("max_detections"));
  o.maxDetections = maxDetections.AsInt32();
  NNHAL_ASSIGN_OR_RETURN(auto maxClasses, required("max_classes_per_detection"));
  o.maxClassesPerDetection = maxClasses.AsInt32();
  if (number("detections_per_class").IsNumeric()) {
    o.detectionsPerClass = number("detections_per_class").AsInt32();
  }
  if (number("use_regular_nms").IsNumeric() || number("use_regular_nms").IsBool()) {
    o.useRegularNms = number("use_regular_nms").AsBool();
  }
  NNHAL_ASSIGN_OR_RETURN(auto score, required("nms_score_threshold"));
  o.scoreThreshold = score.AsFloat();
  NNHAL_ASSIGN_OR_RETURN(auto iou, required("nms_iou_threshold"));
  o.iouThreshold = iou.AsFloat();
  NNHAL_ASSIGN_OR_RETURN(auto classes, required("num_classes"));
  o.numClasses = classes.AsInt32();
  NNHAL_ASSIGN_OR_RETURN(auto y, required("y_scale"));
  NNHAL_ASSIGN_OR_RETURN(auto x, required("x_scale"));
  NNHAL_ASSIGN_OR_RETURN(auto h, required("h_scale"));
  NNHAL_ASSIGN_OR_RETURN(auto w, required("w_scale"));
  o.yScale = y.AsFloat();
  o.xScale = x.AsFloat();
  o.hScale = h.AsFloat();
  o.wScale = w.AsFloat();
  NNHAL_TRY(expectPositive(c, o.maxDetections, "max_detections"));
  NNHAL_TRY(expectPositive(c, o.maxClassesPerDetection, "max_classes_per_detection"));
  NNHAL_TRY(expectPositive(c, o.detectionsPerClass, "detections_per_class"));
  NNHAL_TRY(expectPositive(c, o.numClasses, "num_classes"));
  for (const float scale : {o.yScale, o.xScale, o.hScale, o.wScale}) {
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      return c.error("the box scales (y_scale, x_scale, h_scale, w_scale) must be positive");
    }
  }
  return o;
}

bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

/// `operand` as FLOAT32: itself, or a DEQUANTIZE of it into a new temporary.
Result<uint32_t> asFloat(OperatorContext& c, uint32_t operand, std::string_view what) {
  const Operand& source = c.operand(operand);
  if (source.type == OperandType::TENSOR_FLOAT32) return operand;
  if (!isQuant8(source.type)) {
    return c.error(std::string(what) + " must be FLOAT32 or 8-bit quantized, not " +
                   std::string(toString(source.type)));
  }
  const uint32_t real = c.builder().addOperand(OperandType::TENSOR_FLOAT32, source.dimensions);
  c.builder().operand(real).lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  c.addOperation(OperationType::DEQUANTIZE, {operand}, {real});
  return real;
}

/// The constant anchors as a FLOAT32 constant (dequantized here when quantized).
Result<uint32_t> constantAnchors(OperatorContext& c, uint32_t anchors, uint32_t count) {
  const Operand& operand = c.operand(anchors);
  if (operand.dimensions.size() != 2 || operand.dimensions[0] != count ||
      operand.dimensions[1] != 4) {
    return c.error("anchors must be [" + std::to_string(count) + ", 4]");
  }
  if (operand.type == OperandType::TENSOR_FLOAT32) return anchors;
  if (!isQuant8(operand.type)) return c.error("anchors must be FLOAT32 or 8-bit quantized");
  const auto bytes = c.builder().constantBytes(anchors);
  if (!bytes) return c.error("anchors must be a constant tensor");
  const bool isSigned = operand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  std::vector<uint8_t> real(bytes->size() * sizeof(float));
  for (size_t i = 0; i < bytes->size(); ++i) {
    const int32_t q = isSigned ? static_cast<int8_t>((*bytes)[i]) : (*bytes)[i];
    const float value = operand.scale * static_cast<float>(q - operand.zeroPoint);
    std::memcpy(real.data() + i * sizeof(float), &value, sizeof(value));
  }
  const uint32_t result = c.builder().addOperand(OperandType::TENSOR_FLOAT32, {count, 4});
  c.builder().setConstantOwned(result, std::move(real));
  return result;
}

/// Gives TFLite output `index` (unspecified shape in the file) its shape and FLOAT32 type.
Result<uint32_t> floatOutput(OperatorContext& c, size_t index, std::vector<uint32_t> dims) {
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(index));
  Operand& operand = c.builder().operand(output);
  if (operand.type != OperandType::TENSOR_FLOAT32) {
    return c.error("output " + std::to_string(index) + " must be FLOAT32");
  }
  operand.dimensions = std::move(dims);
  return output;
}

}  // namespace

Result<void> mapDetectionPostprocess(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(3, 3, 4));
  NNHAL_ASSIGN_OR_RETURN(const PostProcessOptions o, parseOptions(c));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t encodings, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t predictions, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t anchorTensor, c.input(2));
  const std::vector<uint32_t>& boxDims = c.operand(encodings).dimensions;
  const std::vector<uint32_t>& classDims = c.operand(predictions).dimensions;
  if (boxDims.size() != 3 || boxDims[2] < 4) {
    return c.error("box encodings must be [batches, anchors, >= 4]");
  }
  if (classDims.size() != 3 || classDims[0] != boxDims[0] || classDims[1] != boxDims[1]) {
    return c.error("class predictions must be [batches, anchors, classes] like the boxes");
  }
  if (classDims[2] != static_cast<uint32_t>(o.numClasses) + 1) {
    return c.error("class predictions have " + std::to_string(classDims[2]) +
                   " columns; DETECTION_POSTPROCESSING needs num_classes + 1 (" +
                   std::to_string(o.numClasses + 1) + ", column 0 the background)");
  }
  // TFLite accepts a negative score threshold (keep every score); NNAPI's is >= 0. Scores
  // that cannot be negative (dequantized with zero point at the bottom of the range) make
  // 0 equivalent but for boxes scoring exactly 0, which NNAPI's strict > then drops.
  float scoreThreshold = o.scoreThreshold;
  if (scoreThreshold < 0.0f) {
    const Operand& scoreOperand = c.operand(predictions);
    const bool nonNegative =
        (scoreOperand.type == OperandType::TENSOR_QUANT8_ASYMM && scoreOperand.zeroPoint == 0) ||
        (scoreOperand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED &&
         scoreOperand.zeroPoint == -128);
    if (!nonNegative) {
      return c.error("nms_score_threshold " + std::to_string(o.scoreThreshold) +
                     " is negative and the scores may be too; DETECTION_POSTPROCESSING needs a "
                     "threshold >= 0");
    }
    scoreThreshold = 0.0f;
  }
  const uint32_t batches = boxDims[0];
  NNHAL_ASSIGN_OR_RETURN(const uint32_t anchors, constantAnchors(c, anchorTensor, boxDims[1]));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t deltas, asFloat(c, encodings, "box encodings"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t scores, asFloat(c, predictions, "class predictions"));

  // Both are positive int32: their product fits int64. Output slots beyond 2^20 per batch
  // are refused (a file asking for them only asks for memory).
  const int64_t slotCount = o.useRegularNms
                                ? int64_t{o.maxDetections}
                                : int64_t{o.maxDetections} * int64_t{o.maxClassesPerDetection};
  if (slotCount > (int64_t{1} << 20)) {
    return c.error("max_detections x max_classes_per_detection = " + std::to_string(slotCount) +
                   " output slots; at most 1048576 are imported");
  }
  const auto slots = static_cast<uint32_t>(slotCount);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t boxesOut, floatOutput(c, 0, {batches, slots, 4}));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t classesOut, floatOutput(c, 1, {batches, slots}));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t scoresOut, floatOutput(c, 2, {batches, slots}));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t countOut, floatOutput(c, 3, {batches}));

  ModelBuilder& b = c.builder();
  const uint32_t classLabels = b.addOperand(OperandType::TENSOR_INT32, {batches, slots});
  const uint32_t detections = b.addOperand(OperandType::TENSOR_INT32, {batches});
  b.operand(classLabels).lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  b.operand(detections).lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  c.addOperation(
      OperationType::DETECTION_POSTPROCESSING,
      {scores, deltas, anchors, b.addFloat32Scalar(o.yScale), b.addFloat32Scalar(o.xScale),
       b.addFloat32Scalar(o.hScale), b.addFloat32Scalar(o.wScale), b.addBoolScalar(o.useRegularNms),
       b.addInt32Scalar(o.maxDetections), b.addInt32Scalar(o.maxClassesPerDetection),
       b.addInt32Scalar(o.detectionsPerClass), b.addFloat32Scalar(scoreThreshold),
       b.addFloat32Scalar(o.iouThreshold), b.addBoolScalar(false)},
      {scoresOut, boxesOut, classLabels, detections});
  c.addOperation(OperationType::CAST, {classLabels}, {classesOut});
  c.addOperation(OperationType::CAST, {detections}, {countOut});
  return {};
}

}  // namespace nnhal::hal::tfl
