// Conversion between onnx::TensorProto and TensorData.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "env/graph/tensor.h"

namespace graphworld {

// float, double and float16 become float32; int64, int32, int8, uint8 and
// bool become int64 (bool as 0/1, which folding converts back). Throws
// ImportError mentioning `where` for other types or inconsistent sizes.
std::shared_ptr<TensorData> tensor_from_proto(const onnx::TensorProto& proto, const std::string& where);

// Fills `proto` (name, type, dims, raw_data) from `data`.
void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto* proto);

}  // namespace graphworld
