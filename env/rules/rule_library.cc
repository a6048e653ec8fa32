#include "env/rules/rule_library.h"

#include <algorithm>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/checksum.h"
#include "common/error.h"
#include "common/schema/rules.capnp.h"

namespace graphworld {

namespace {

constexpr char kMagic[8] = {'G', 'W', 'R', 'U', 'L', 'E', 'S', '\n'};
constexpr size_t kHeaderSize = 32;

// ---- writing ---------------------------------------------------------------

void write_value(schema::Value::Builder out, const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) {
    out.setInt(*i);
  } else if (auto* d = std::get_if<double>(&v)) {
    out.setFloat(*d);
  } else {
    const auto& list = std::get<std::vector<int64_t>>(v);
    auto ints = out.initInts(static_cast<unsigned>(list.size()));
    for (size_t k = 0; k < list.size(); ++k) ints.set(static_cast<unsigned>(k), list[k]);
  }
}

void write_dims(capnp::List<schema::DimTerm>::Builder out, const std::vector<DimTerm>& dims) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].is_symbol())
      out[static_cast<unsigned>(k)].setSymbol(static_cast<uint32_t>(dims[k].symbol));
    else
      out[static_cast<unsigned>(k)].setLiteral(dims[k].literal);
  }
}

void write_ref(schema::Ref::Builder out, const PatternRef& r) {
  if (r.is_var()) {
    out.setVar(static_cast<uint32_t>(r.var));
  } else {
    auto op = out.initOp();
    op.setOp(static_cast<uint32_t>(r.op));
    op.setIndex(static_cast<uint32_t>(r.index));
  }
}

void write_pattern(capnp::List<schema::PatternOp>::Builder out, const std::vector<PatternOp>& ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    auto op = out[static_cast<unsigned>(i)];
    op.setType(std::string(op_type_name(ops[i].type)));
    op.setNumOutputs(static_cast<uint32_t>(ops[i].num_outputs));
    auto inputs = op.initInputs(static_cast<unsigned>(ops[i].inputs.size()));
    for (size_t k = 0; k < ops[i].inputs.size(); ++k) write_ref(inputs[static_cast<unsigned>(k)], ops[i].inputs[k]);
    auto attrs = op.initAttrs(static_cast<unsigned>(ops[i].attrs.size()));
    for (size_t k = 0; k < ops[i].attrs.size(); ++k) {
      const auto& [key, e] = ops[i].attrs[k];
      auto a = attrs[static_cast<unsigned>(k)];
      a.setKey(std::string(attr_key_name(key)));
      switch (e.kind) {
        case AttrExprKind::Literal: write_value(a.initLiteral(), e.literal); break;
        case AttrExprKind::Param: a.setParam(static_cast<uint32_t>(e.param)); break;
        case AttrExprKind::Dims: write_dims(a.initDims(static_cast<unsigned>(e.dims.size())), e.dims); break;
        case AttrExprKind::SamePads: write_dims(a.initSamePads(static_cast<unsigned>(e.dims.size())), e.dims); break;
        case AttrExprKind::ComposePerm: {
          auto c = a.initComposePerm();
          c.setFirst(static_cast<uint32_t>(e.param));
          c.setSecond(static_cast<uint32_t>(e.param2));
          break;
        }
      }
    }
  }
}

void write_rule(schema::Rule::Builder out, const Rule& rule) {
  out.setName(rule.name);
  out.setOrigin(rule.origin);
  auto dims = out.initDims(static_cast<unsigned>(rule.dims.size()));
  for (size_t k = 0; k < rule.dims.size(); ++k) {
    dims[static_cast<unsigned>(k)].setName(rule.dims[k].name);
    dims[static_cast<unsigned>(k)].setDomain(std::string(dim_domain_name(rule.dims[k].domain)));
  }
  auto vars = out.initVars(static_cast<unsigned>(rule.vars.size()));
  for (size_t k = 0; k < rule.vars.size(); ++k) {
    auto v = vars[static_cast<unsigned>(k)];
    v.setName(rule.vars[k].name);
    v.setWeight(rule.vars[k].weight);
    v.setPositive(rule.vars[k].positive);
    write_dims(v.initShape(static_cast<unsigned>(rule.vars[k].shape.size())), rule.vars[k].shape);
  }
  auto params = out.initParams(static_cast<unsigned>(rule.params.size()));
  for (size_t k = 0; k < rule.params.size(); ++k) {
    auto p = params[static_cast<unsigned>(k)];
    p.setName(rule.params[k].name);
    p.setRole(std::string(attr_key_name(rule.params[k].role)));
    auto admits = p.initAdmits(static_cast<unsigned>(rule.params[k].admits.size()));
    for (size_t a = 0; a < rule.params[k].admits.size(); ++a)
      write_value(admits[static_cast<unsigned>(a)], rule.params[k].admits[a]);
  }
  write_pattern(out.initSource(static_cast<unsigned>(rule.source.size())), rule.source);
  write_pattern(out.initTarget(static_cast<unsigned>(rule.target.size())), rule.target);
  auto outputs = out.initOutputs(static_cast<unsigned>(rule.outputs.size()));
  for (size_t k = 0; k < rule.outputs.size(); ++k) {
    write_ref(outputs[static_cast<unsigned>(k)].initSource(), rule.outputs[k].source);
    write_ref(outputs[static_cast<unsigned>(k)].initTarget(), rule.outputs[k].target);
  }
  auto constraints = out.initConstraints(static_cast<unsigned>(rule.constraints.size()));
  for (size_t k = 0; k < rule.constraints.size(); ++k) {
    auto c = constraints[static_cast<unsigned>(k)];
    c.setKind(std::string(constraint_kind_name(rule.constraints[k].kind)));
    auto ps = c.initParams(static_cast<unsigned>(rule.constraints[k].params.size()));
    for (size_t p = 0; p < rule.constraints[k].params.size(); ++p)
      ps.set(static_cast<unsigned>(p), static_cast<uint32_t>(rule.constraints[k].params[p]));
    auto ds = c.initDims(static_cast<unsigned>(rule.constraints[k].dims.size()));
    for (size_t d = 0; d < rule.constraints[k].dims.size(); ++d)
      ds.set(static_cast<unsigned>(d), static_cast<uint32_t>(rule.constraints[k].dims[d]));
    auto vs = c.initVars(static_cast<unsigned>(rule.constraints[k].vars.size()));
    for (size_t v = 0; v < rule.constraints[k].vars.size(); ++v)
      vs.set(static_cast<unsigned>(v), static_cast<uint32_t>(rule.constraints[k].vars[v]));
  }
}

// ---- reading ---------------------------------------------------------------

// Reading context: every error names the source and the rule being read.
struct Reader {
  std::string what;
  std::string rule_name = "?";

  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(what + ": rule '" + rule_name + "': " + message +
                      ". The file may come from a newer graphworld; regenerate it with `graphworld rules generate`.");
  }

  OpType op_type(const std::string& name) const {
    auto t = op_type_from_name(name);
    if (!t) fail("unknown op type '" + name + "'");
    return *t;
  }

  AttrKey attr_key(const std::string& name) const {
    auto k = attr_key_from_name(name);
    if (!k) fail("unknown parameter '" + name + "'");
    return *k;
  }

  DimDomain domain(const std::string& name) const {
    for (DimDomain d : {DimDomain::Any, DimDomain::Spatial, DimDomain::Kernel, DimDomain::OddKernel})
      if (dim_domain_name(d) == name) return d;
    fail("unknown dim domain '" + name + "'");
  }

  ConstraintKind constraint(const std::string& name) const {
    for (ConstraintKind c :
         {ConstraintKind::IdentityPerm, ConstraintKind::InversePerms, ConstraintKind::GroupedChannels,
          ConstraintKind::SiblingInputs, ConstraintKind::DimProduct})
      if (constraint_kind_name(c) == name) return c;
    fail("unknown constraint '" + name + "'");
  }
};

int32_t to_index(uint32_t v) { return v > 1u << 30 ? (1 << 30) : static_cast<int32_t>(v); }

AttrValue read_value(schema::Value::Reader v) {
  switch (v.which()) {
    case schema::Value::INT: return v.getInt();
    case schema::Value::FLOAT: return v.getFloat();
    case schema::Value::INTS: {
      std::vector<int64_t> out;
      for (int64_t x : v.getInts()) out.push_back(x);
      return out;
    }
  }
  return int64_t{0};
}

std::vector<DimTerm> read_dims(capnp::List<schema::DimTerm>::Reader dims) {
  std::vector<DimTerm> out;
  for (auto d : dims)
    out.push_back(d.which() == schema::DimTerm::SYMBOL ? DimTerm::of_symbol(to_index(d.getSymbol()))
                                                       : DimTerm::of_literal(d.getLiteral()));
  return out;
}

PatternRef read_ref(schema::Ref::Reader r) {
  if (r.which() == schema::Ref::VAR) return PatternRef::of_var(to_index(r.getVar()));
  return PatternRef::of_op(to_index(r.getOp().getOp()), to_index(r.getOp().getIndex()));
}

std::vector<PatternOp> read_pattern(const Reader& ctx, capnp::List<schema::PatternOp>::Reader ops) {
  std::vector<PatternOp> out;
  for (auto op : ops) {
    PatternOp p;
    p.type = ctx.op_type(op.getType());
    p.num_outputs = to_index(op.getNumOutputs());
    for (auto r : op.getInputs()) p.inputs.push_back(read_ref(r));
    for (auto a : op.getAttrs()) {
      AttrKey key = ctx.attr_key(a.getKey());
      AttrExpr e;
      switch (a.which()) {
        case schema::AttrExpr::LITERAL: e = AttrExpr::of_literal(read_value(a.getLiteral())); break;
        case schema::AttrExpr::PARAM: e = AttrExpr::of_param(to_index(a.getParam())); break;
        case schema::AttrExpr::DIMS: e = AttrExpr::of_dims(read_dims(a.getDims())); break;
        case schema::AttrExpr::SAME_PADS: e = AttrExpr::same_pads(read_dims(a.getSamePads())); break;
        case schema::AttrExpr::COMPOSE_PERM:
          e = AttrExpr::compose_perm(to_index(a.getComposePerm().getFirst()), to_index(a.getComposePerm().getSecond()));
          break;
      }
      if (p.find_attr(key)) ctx.fail("parameter '" + std::string(attr_key_name(key)) + "' appears twice on one op");
      p.attrs.emplace_back(key, std::move(e));
    }
    sort_pattern_attrs(p.attrs);
    out.push_back(std::move(p));
  }
  return out;
}

Rule read_rule(Reader& ctx, schema::Rule::Reader r) {
  Rule rule;
  rule.name = r.getName();
  ctx.rule_name = rule.name;
  rule.origin = r.getOrigin();
  for (auto d : r.getDims()) rule.dims.push_back({d.getName(), ctx.domain(d.getDomain())});
  for (auto v : r.getVars()) rule.vars.push_back({v.getName(), v.getWeight(), v.getPositive(), read_dims(v.getShape())});
  for (auto p : r.getParams()) {
    RuleParam param{p.getName(), ctx.attr_key(p.getRole()), {}};
    for (auto a : p.getAdmits()) param.admits.push_back(read_value(a));
    rule.params.push_back(std::move(param));
  }
  rule.source = read_pattern(ctx, r.getSource());
  rule.target = read_pattern(ctx, r.getTarget());
  for (auto o : r.getOutputs()) rule.outputs.push_back({read_ref(o.getSource()), read_ref(o.getTarget())});
  for (auto c : r.getConstraints()) {
    RuleConstraint constraint{ctx.constraint(c.getKind()), {}, {}, {}};
    for (uint32_t p : c.getParams()) constraint.params.push_back(to_index(p));
    for (uint32_t d : c.getDims()) constraint.dims.push_back(to_index(d));
    for (uint32_t v : c.getVars()) constraint.vars.push_back(to_index(v));
    rule.constraints.push_back(std::move(constraint));
  }
  try {
    check_rule_references(rule);
  } catch (const GraphError& e) {
    ctx.fail(std::string("bad reference: ") + e.what());
  }
  return rule;
}

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
T get(const std::string& in, size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

}  // namespace

std::string serialize_rule_library(const RuleLibrary& library) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::RuleLibrary>();
  root.setFormatVersion(kRuleLibraryFormatVersion);
  root.setDescription(library.description);
  auto rules = root.initRules(static_cast<unsigned>(library.rules.size()));
  for (size_t i = 0; i < library.rules.size(); ++i) write_rule(rules[static_cast<unsigned>(i)], library.rules[i]);
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto payload = words.asChars();
  std::string out(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kRuleLibraryFormatVersion);
  put<uint32_t>(out, 0);
  put<uint64_t>(out, payload.size());
  put<uint64_t>(out, fnv1a_64(payload.begin(), payload.size()));
  out.append(payload.begin(), payload.size());
  return out;
}

RuleLibrary parse_rule_library(const std::string& bytes, const std::string& what) {
  auto fail = [&](const std::string& message) -> void {
    throw FormatError(what + ": " + message);
  };
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    fail("not a graphworld rule library (bad magic bytes); give a file written by `graphworld rules generate`");
  uint32_t version = get<uint32_t>(bytes, 8);
  if (version != kRuleLibraryFormatVersion)
    fail("rule library format version " + std::to_string(version) + ", but this graphworld reads version " +
         std::to_string(kRuleLibraryFormatVersion) + "; regenerate it with `graphworld rules generate`");
  uint64_t size = get<uint64_t>(bytes, 16);
  uint64_t checksum = get<uint64_t>(bytes, 24);
  if (size != bytes.size() - kHeaderSize)
    fail("truncated or padded: the header promises " + std::to_string(size) + " payload bytes, the file has " +
         std::to_string(bytes.size() - kHeaderSize));
  if (size % sizeof(capnp::word) != 0) fail("payload size is not a whole number of 8-byte words");
  if (fnv1a_64(bytes.data() + kHeaderSize, size) != checksum)
    fail("checksum mismatch: the file was altered or partly written");

  // Copy into word-aligned memory, as Cap'n Proto reads in place.
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data() + kHeaderSize, size);
  RuleLibrary library;
  Reader ctx{what};
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = words.size() * 4 + 1024;
    capnp::FlatArrayMessageReader message(words, options);
    auto root = message.getRoot<schema::RuleLibrary>();
    if (root.getFormatVersion() != kRuleLibraryFormatVersion)
      fail("the message says format version " + std::to_string(root.getFormatVersion()) + ", the header " +
           std::to_string(version));
    library.description = root.getDescription();
    for (auto r : root.getRules()) library.rules.push_back(read_rule(ctx, r));
  } catch (const kj::Exception& e) {
    fail("malformed rule library payload (" + std::string(e.getDescription().cStr()) + ")");
  }
  return library;
}

void save_rule_library(const RuleLibrary& library, const std::string& path) {
  const std::string bytes = serialize_rule_library(library);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write rule library '" + tmp + "': check the directory exists and is writable");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw Error("writing rule library '" + tmp + "' failed (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error("cannot move '" + tmp + "' to '" + path + "': " + std::strerror(errno));
}

RuleLibrary load_rule_library(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot open rule library '" + path + "': " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_rule_library(buffer.str(), path);
}

}  // namespace graphworld
