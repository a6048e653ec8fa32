# The messages actors and the learner exchange over ZeroMQ, and the header
# every one of them carries. Encoded and checked by learner/wire_message.h;
# nothing read from a socket is used before that check passes.
#
# Bulk per-step data travels as Data blobs of little-endian float32 / int32
# arrays: one bounds-checked copy per array on receipt instead of a list
# traversal per element.
@0xd4c1f2b7e9a35c10;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("graphworld::schema");

struct Message {
  header @0 :Header;
  body :union {
    hello @1 :Hello;
    heartbeat @2 :Heartbeat;
    stop @3 :Stop;
    trajectory @4 :TrajectoryBatch;
    parameterChunk @5 :ParameterChunk;
    parameterRequest @6 :ParameterRequest;
    metrics @7 :Metrics;
    receipt @8 :Receipt;
    costEntry @9 :CostEntry;
    dreamTrajectory @10 :DreamTrajectory;
  }
}

struct Header {
  schemaVersion @0 :UInt32;   # must equal the reader's kMessageSchemaVersion
  runId @1 :Text;             # a message from another run is dropped
  senderId @2 :UInt32;        # actor index; the learner is 0xffffffff
  incarnation @3 :UInt64;     # new each time a process starts: tells a restarted actor from its old self
  policyVersion @4 :Int64;    # the parameters the sender held when it made this
  sentUnixNs @5 :Int64;
}

struct Hello {
  role @0 :Text;              # "actor"
  hostname @1 :Text;
  pid @2 :UInt32;
}

struct Heartbeat {
  stepsSent @0 :UInt64;
  rssBytes @1 :UInt64;
}

# The learner to one actor: how many of this actor incarnation's trajectory
# messages it has taken (into a batch, or counted as stale); sent for each
# one taken and with every heartbeat reply. An actor starts a rollout only
# once its previous one is taken, which bounds policy lag however many
# actors there are.
struct Receipt {
  trajectoriesTaken @0 :UInt64;
}

# The price of one op configuration an actor's cost table lacked. From an
# actor: ms -1 asks for the run's price, ms >= 0 proposes what it measured.
# From the learner: the run's price, which every actor uses (the first
# proposal it heard), or -1 when there is none yet (then the asker measures).
struct CostEntry {
  key @0 :Text;               # OpCostKey::canonical()
  ms @1 :Float64;
}

struct Stop {
  reason @0 :Text;
}

struct ParameterRequest {
  haveVersion @0 :Int64;      # -1: none yet
}

# Parameters are a byte blob (LibTorch archive) cut into chunks well under
# Cap'n Proto's default traversal limit. Each chunk and the whole blob carry
# 64-bit checksums (word_checksum_64, common/checksum.h); a receiver
# assembles a version only from chunks that agree on its version, count,
# size and whole-blob checksum.
struct ParameterChunk {
  version @0 :Int64;
  chunkIndex @1 :UInt32;
  chunkCount @2 :UInt32;
  totalBytes @3 :UInt64;
  blobChecksum @4 :UInt64;
  chunkChecksum @5 :UInt64;
  data @6 :Data;
}

struct Metrics {
  names @0 :List(Text);
  values @1 :List(Float64);
}

# A rollout: one segment of consecutive steps per environment.
struct TrajectoryBatch {
  segments @0 :List(Segment);
  episodes @1 :List(EpisodeEnd);
  parametersFrom @2 :UInt64;   # the incarnation of the learner whose parameters acted
  # gpu cost model: distinct configurations this actor process has priced
  # from the measured table, and by the model (cumulative).
  costTableHits @3 :UInt64;
  costModelFallbacks @4 :UInt64;
}

struct EpisodeEnd {
  graph @0 :Text;
  reductionPct @1 :Float64;
  bestReductionPct @2 :Float64;
  steps @3 :Int32;
  # Played by a model-based controller's greedy policy: the episodes that
  # measure a round (worldmodel/model_based_learner.h). Older actors send false.
  greedy @4 :Bool;
}

# Per-step columns, all of one length (the segment's step count). The
# (graphIndex, episodeSeed, episodeStep) columns with the actions let a
# reader rebuild every observation by replaying the episode in GraphEnv.
struct Segment {
  bootstrapValue @0 :Float32;
  graphIndex @1 :List(Int32);      # into the run's training graphs
  episodeSeed @2 :List(UInt64);
  episodeStep @3 :List(Int32);     # steps taken in the episode before this one
  xfer @4 :List(Int32);
  location @5 :List(Int32);
  logProb @6 :List(Float32);
  value @7 :List(Float32);
  reward @8 :List(Float32);
  done @9 :List(Bool);
  costMs @10 :List(Float64);       # the graph's cost after the step
  observations @11 :List(CompactObservation);
}

# learner/rollout.h's compact observation: the graph tuple and xfer mask in
# full, candidate locations of the taken xfer only.
struct CompactObservation {
  numNodes @0 :Int32;
  numEdges @1 :Int32;
  numXfers @2 :Int32;
  maxLocations @3 :Int32;
  nodeFeatures @4 :Data;     # float32 [numNodes * kNodeFeatureDim]
  edgeFeatures @5 :Data;     # float32 [numEdges * kEdgeFeatureDim]
  globals @6 :Data;          # float32 [kGlobalFeatureDim]
  senders @7 :Data;          # int32 [numEdges]
  receivers @8 :Data;        # int32 [numEdges]
  nodeOp @9 :Data;           # int32 [numNodes]
  xferMask @10 :Data;        # uint8 [numXfers + 1]
  # Observation::location_begin, sparsely: the xfers that list locations
  # (increasing) and how many each lists; a compact observation has one.
  locationXfers @11 :Data;   # int32
  locationCounts @12 :Data;  # int32, one per entry of locationXfers
  nodeBegin @13 :Data;       # int32 [locations + 1]
  matchNodes @14 :Data;      # int32, node indices
  # With location rewards on (both empty otherwise): the reward of each
  # listed location, and of each xfer's best location.
  locationReward @15 :Data;  # float32 [locations]
  xferReward @16 :Data;      # float32 [numXfers + 1]
}

# A dream actor's rollout (worldmodel/, model-based runs): `steps` steps of
# `rows` dream environments inside one world model, step-major (entry
# t * rows + j is row j's step t). What the controller saw (z, the LSTM's h,
# its action mask over the world model's rules plus NO-OP), what it did and
# what the dream answered. No graph is involved.
struct DreamTrajectory {
  worldModel @0 :Int64;        # the world model's generation (the learner refuses other ones)
  rows @1 :UInt32;
  steps @2 :UInt32;
  latentDim @3 :UInt32;
  hiddenDim @4 :UInt32;
  actions @5 :UInt32;          # the world model's rules + 1 (NO-OP last)
  z @6 :Data;                  # float32 [steps * rows * latentDim]
  h @7 :Data;                  # float32 [steps * rows * hiddenDim]
  mask @8 :Data;               # uint8 [steps * rows * actions]
  action @9 :Data;             # int32 [steps * rows]
  logProb @10 :Data;           # float32 [steps * rows]
  value @11 :Data;             # float32 [steps * rows]
  reward @12 :Data;            # float32 [steps * rows]
  done @13 :Data;              # uint8 [steps * rows]
  bootstrap @14 :Data;         # float32 [rows]: the value after the last step
  episodes @15 :UInt64;        # dream episodes that ended in it
  returnSum @16 :Float64;      # the sum of their predicted reductions (percent)
  parametersFrom @17 :UInt64;  # the incarnation of the learner whose parameters acted
}
