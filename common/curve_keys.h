// CURVE key pairs for cluster runs: made once per run into the run folder
// (files of mode 0600), the learner's public key handed to every actor, and
// each actor's public key on the learner's admission list.
#pragma once

#include <string>

namespace graphworld {

struct CurveKeyPair {
  std::string public_key;  // Z85 text, 40 characters
  std::string secret_key;
};

// Error if this libzmq was built without CURVE (it would then only pretend
// to secure the sockets), saying how to get one that has it.
void require_curve();

CurveKeyPair generate_curve_keys();

// The pair as two lines of text, written atomically with mode 0600 (the
// secret key is readable by its owner only).
void write_curve_keys(const std::string& path, const CurveKeyPair& keys);
// FormatError naming the file if it is not such a pair, or if it can be
// read by others than its owner (a leaked secret key is no key).
CurveKeyPair read_curve_keys(const std::string& path);

}  // namespace graphworld
