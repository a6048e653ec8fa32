#include "common/curve_keys.h"

#include <sys/stat.h>
#include <zmq.h>

#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"

namespace graphworld {

void require_curve() {
  if (!zmq_has("curve"))
    throw UnavailableError(
        "this libzmq was built without CURVE, so cluster sockets cannot be authenticated or encrypted; install a "
        "libzmq with CURVE (Debian's libzmq5 has it, via libsodium) or run single-node on loopback");
}

CurveKeyPair generate_curve_keys() {
  require_curve();
  char public_key[41] = {}, secret_key[41] = {};
  if (zmq_curve_keypair(public_key, secret_key) != 0)
    throw Error(std::string("cannot generate a CURVE key pair: ") + zmq_strerror(zmq_errno()));
  return {public_key, secret_key};
}

void write_curve_keys(const std::string& path, const CurveKeyPair& keys) {
  write_private_file_atomically(path, "public " + keys.public_key + "\nsecret " + keys.secret_key + "\n");
}

CurveKeyPair read_curve_keys(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw FormatError(path + ": no CURVE key file there");
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    throw FormatError(path + ": the key file is open to group or others; its secret key may have leaked: make new keys "
                      "(key files must be mode 0600)");
  std::ifstream in(path);
  CurveKeyPair keys;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, value;
    fields >> name >> value;
    if (name == "public") keys.public_key = value;
    else if (name == "secret") keys.secret_key = value;
  }
  if (keys.public_key.size() != 40 || keys.secret_key.size() != 40)
    throw FormatError(path + ": not a CURVE key file (expected lines 'public KEY' and 'secret KEY', 40 characters each)");
  return keys;
}

}  // namespace graphworld
