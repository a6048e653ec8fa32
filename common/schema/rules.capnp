# The rule library file: substitution rules, as written by
# `graphworld rules generate` and read by env/rules/rule_library_file.h.
#
# Op types, parameter names and dimension domains are stored as text, not as
# enum numbers, so a library outlives reorderings of the C++ enums and a file
# naming an op this build does not know fails with that op's name.
@0xa167570ef16bd9bd;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("graphworld::schema");

struct RuleLibrary {
  formatVersion @0 :UInt32;   # must equal the reader's kRuleLibraryFormatVersion
  description @1 :Text;       # how the library was made
  rules @2 :List(Rule);
}

struct Rule {
  name @0 :Text;              # stable: derived from the patterns, not from file order
  origin @1 :Text;            # "generated" or "hand-written"
  dims @2 :List(DimSymbol);
  vars @3 :List(Var);
  params @4 :List(Param);
  source @5 :List(PatternOp);
  target @6 :List(PatternOp);
  outputs @7 :List(OutputPair);
  constraints @8 :List(Constraint);
}

struct DimSymbol {
  name @0 :Text;
  domain @1 :Text;            # "any", "spatial", "kernel", "odd-kernel"
}

struct DimTerm {
  union {
    symbol @0 :UInt32;        # index into Rule.dims
    literal @1 :Int64;
  }
}

struct Var {
  name @0 :Text;
  weight @1 :Bool;            # binds only to constant (weight-only) tensors
  shape @2 :List(DimTerm);
  positive @3 :Bool;          # verified with positive values only (a variance)
}

struct Value {
  union {
    int @0 :Int64;
    float @1 :Float64;
    ints @2 :List(Int64);
  }
}

struct Param {
  name @0 :Text;
  role @1 :Text;              # the attribute it stands for, e.g. "strides"
  admits @2 :List(Value);     # empty: any value
}

struct Ref {
  union {
    var @0 :UInt32;
    op :group {
      op @1 :UInt32;
      index @2 :UInt32;
    }
  }
}

struct AttrExpr {
  key @0 :Text;
  union {
    literal @1 :Value;
    param @2 :UInt32;
    dims @3 :List(DimTerm);
    samePads @4 :List(DimTerm);   # kernel dims; pads (k-1)/2 on both sides
    composePerm :group {
      first @5 :UInt32;           # params: perm applied first, then second
      second @6 :UInt32;
    }
  }
}

struct PatternOp {
  type @0 :Text;
  attrs @1 :List(AttrExpr);
  inputs @2 :List(Ref);
  numOutputs @3 :UInt32;
}

struct OutputPair {
  source @0 :Ref;
  target @1 :Ref;
}

struct Constraint {
  kind @0 :Text;              # e.g. "identity-perm"
  params @1 :List(UInt32);
  dims @2 :List(UInt32);      # dim symbols it relates ("grouped-channels": c, cg, o; "dim-product": n, a, b)
  vars @3 :List(UInt32);      # variables it relates ("sibling-inputs": two outputs of one op)
}
