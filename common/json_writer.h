// A minimal streaming JSON writer for the CLI's --json output.
//
// Keys are written in the order given, so output is stable and diffable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphworld {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint64_t number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(const std::vector<int64_t>& numbers);
  JsonWriter& null_value();  // for a key whose value was not measured

  const std::string& str() const { return out_; }

 private:
  void separate();
  std::string out_;
  // One entry per open container: true once it holds an element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

std::string json_escape(std::string_view text);

}  // namespace graphworld
