// Error types shared by every graphworld library.
//
// Every error a user can cause (a bad file, a bad flag, a bad config key) is an
// exception whose message says what was wrong, where, and what to do. Library
// code never calls exit() or assert() on user input.
#pragma once

#include <stdexcept>
#include <string>

namespace graphworld {

// Base of all graphworld errors; catch this at the CLI boundary.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model file that cannot be read or is not valid ONNX / not supported.
class ImportError : public Error {
 public:
  using Error::Error;
};

// A graph that breaks an invariant: cycle, dangling input, shape mismatch.
class GraphError : public Error {
 public:
  using Error::Error;
};

// A command line or config value that is out of range or unknown.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A data file (rule library, cache, checkpoint) that is corrupt, truncated,
// of another format version, or refers to things this build does not know.
class FormatError : public Error {
 public:
  using Error::Error;
};

// A feature that needs hardware or a build option this process does not have.
class UnavailableError : public Error {
 public:
  using Error::Error;
};

}  // namespace graphworld
