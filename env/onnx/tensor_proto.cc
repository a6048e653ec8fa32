#include "env/onnx/tensor_proto.h"

#include <cstring>

#include "common/error.h"

namespace graphworld {
namespace {

// Reads element i of a typed repeated field or of raw_data.
template <typename Raw, typename Field>
void copy_elements(const onnx::TensorProto& proto, const Field& field, int64_t count, const std::string& where,
                   auto&& store) {
  if (!proto.raw_data().empty()) {
    if (proto.raw_data().size() != static_cast<size_t>(count) * sizeof(Raw))
      throw ImportError(where + ": raw_data holds " + std::to_string(proto.raw_data().size()) + " bytes but shape needs " +
                        std::to_string(count * static_cast<int64_t>(sizeof(Raw))) + "; the file is corrupt or truncated");
    const char* bytes = proto.raw_data().data();
    for (int64_t i = 0; i < count; ++i) {
      Raw value;
      std::memcpy(&value, bytes + i * sizeof(Raw), sizeof(Raw));
      store(i, value);
    }
    return;
  }
  if (field.size() != count)
    throw ImportError(where + ": holds " + std::to_string(field.size()) + " values but its shape needs " +
                      std::to_string(count));
  for (int64_t i = 0; i < count; ++i) store(i, static_cast<Raw>(field.Get(static_cast<int>(i))));
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace

std::shared_ptr<TensorData> tensor_from_proto(const onnx::TensorProto& proto, const std::string& where) {
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw ImportError(where + ": stored as external data, which graphworld does not read; re-save the model with "
                      "onnx.save_model(model, path, save_as_external_data=False)");
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) throw ImportError(where + ": negative dimension " + std::to_string(d));
    shape.push_back(d);
  }
  int64_t count;
  try {
    count = checked_num_elements(shape, where);
  } catch (const GraphError& e) {
    throw ImportError(e.what());
  }
  using TP = onnx::TensorProto;
  // Check the stored size before allocating, so a corrupt header cannot ask for terabytes.
  if (!proto.raw_data().empty()) {
    int64_t width = proto.data_type() == TP::DOUBLE || proto.data_type() == TP::INT64 ? 8
                    : proto.data_type() == TP::FLOAT || proto.data_type() == TP::INT32 ? 4
                    : proto.data_type() == TP::FLOAT16 || proto.data_type() == TP::INT16 || proto.data_type() == TP::UINT16 ? 2
                    : 1;
    if (static_cast<int64_t>(proto.raw_data().size()) != count * width)
      throw ImportError(where + ": raw_data holds " + std::to_string(proto.raw_data().size()) + " bytes but shape " +
                        shape_to_string(shape) + " needs " + std::to_string(count * width) +
                        "; the file is corrupt or truncated");
  } else {
    int64_t stored = proto.float_data_size() + proto.double_data_size() + proto.int64_data_size() + proto.int32_data_size();
    if (stored != count)
      throw ImportError(where + ": holds " + std::to_string(stored) + " values but its shape " + shape_to_string(shape) +
                        " needs " + std::to_string(count));
  }
  switch (proto.data_type()) {
    case TP::FLOAT: {
      auto data = std::make_shared<TensorData>(DType::Float32, shape);
      if (!proto.raw_data().empty() && proto.raw_data().size() == data->nbytes()) {
        std::memcpy(data->raw(), proto.raw_data().data(), data->nbytes());  // the fast, common path
      } else {
        float* out = data->floats();
        copy_elements<float>(proto, proto.float_data(), count, where, [&](int64_t i, float v) { out[i] = v; });
      }
      return data;
    }
    case TP::DOUBLE: {
      auto data = std::make_shared<TensorData>(DType::Float32, shape);
      float* out = data->floats();
      copy_elements<double>(proto, proto.double_data(), count, where,
                            [&](int64_t i, double v) { out[i] = static_cast<float>(v); });
      return data;
    }
    case TP::FLOAT16: {
      auto data = std::make_shared<TensorData>(DType::Float32, shape);
      float* out = data->floats();
      copy_elements<uint16_t>(proto, proto.int32_data(), count, where,
                              [&](int64_t i, uint16_t v) { out[i] = half_to_float(v); });
      return data;
    }
    case TP::INT64: {
      auto data = std::make_shared<TensorData>(DType::Int64, shape);
      int64_t* out = data->ints();
      copy_elements<int64_t>(proto, proto.int64_data(), count, where, [&](int64_t i, int64_t v) { out[i] = v; });
      return data;
    }
    case TP::INT32:
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
    case TP::INT16:
    case TP::UINT16: {
      auto data = std::make_shared<TensorData>(DType::Int64, shape);
      int64_t* out = data->ints();
      auto store = [&](int64_t i, auto v) { out[i] = static_cast<int64_t>(v); };
      switch (proto.data_type()) {
        case TP::INT32: copy_elements<int32_t>(proto, proto.int32_data(), count, where, store); break;
        case TP::INT16: copy_elements<int16_t>(proto, proto.int32_data(), count, where, store); break;
        case TP::UINT16: copy_elements<uint16_t>(proto, proto.int32_data(), count, where, store); break;
        case TP::INT8: copy_elements<int8_t>(proto, proto.int32_data(), count, where, store); break;
        default: copy_elements<uint8_t>(proto, proto.int32_data(), count, where, store); break;
      }
      return data;
    }
    default:
      throw ImportError(where + ": tensor element type " + std::to_string(proto.data_type()) +
                        " (" + TP::DataType_Name(static_cast<TP::DataType>(proto.data_type())) +
                        ") is not supported; graphworld handles float32/64/16 and integer tensors");
  }
}

void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(data.dtype() == DType::Float32 ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  for (int64_t d : data.shape()) proto->add_dims(d);
  proto->set_raw_data(data.raw(), data.nbytes());
}

}  // namespace graphworld
