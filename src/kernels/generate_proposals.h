// kernels/generate_proposals.h — GENERATE_PROPOSALS on float data (NHWC).
//
// For each batch b: every anchor a at every grid cell (h, w) becomes the box anchors[a] +
// (w * widthStride, h * heightStride, w * widthStride, h * heightStride) (order h, w, a),
// transformed by its delta and clipped to the batch's image (bbox_transform.h). When
// 0 < preNmsTopN < H * W * A, only the preNmsTopN best-scoring boxes are kept (stable sort,
// descending). Boxes with width or height <= minSize, or whose centre is not inside the
// image (centre x < image width, centre y < image height), are dropped; then hardNms
// (nms.h) with iouThreshold keeps at most postNmsTopN (< 0: no limit). Results are listed
// batch by batch in selection order.
#pragma once

#include <cstdint>
#include <vector>

namespace nnhal::kernels {

struct ProposalParams {
  uint32_t batches = 0, height = 0, width = 0, anchors = 0;  ///< the score map's shape
  float heightStride = 1.0f, widthStride = 1.0f;
  int32_t preNmsTopN = -1, postNmsTopN = -1;
  float iouThreshold = 0.0f;
  float minSize = 0.0f;
};

struct Proposals {
  std::vector<float> scores;      ///< [n]
  std::vector<float> rois;        ///< [n, 4]
  std::vector<int32_t> batchIds;  ///< [n]
};

/// scores [batches, height, width, anchors], deltas [batches, height, width, anchors * 4],
/// anchors [anchors, 4], imageInfo [batches, 2] (height, width). Returns false when an
/// anchor box is malformed (x2 < x1 or y2 < y1).
bool generateProposals(const ProposalParams& p, const float* scores, const float* deltas,
                       const float* anchors, const float* imageInfo, Proposals* out);

}  // namespace nnhal::kernels
