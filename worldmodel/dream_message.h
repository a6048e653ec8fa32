// A DreamBatch (dream_trainer.h) as the wire's DreamTrajectoryMessage and
// back: how a dream actor's experience reaches the learner. Included only
// by worldmodel/ .cc files and tests.
#pragma once

#include "learner/wire_message.h"
#include "worldmodel/dream_trainer.h"

namespace graphworld {

DreamTrajectoryMessage dream_batch_to_message(const DreamBatch& batch, int64_t world_model_generation);

// The message's columns as tensors. UsageError when its sizes do not fit
// `model` and `controller` (a dream of another world model).
DreamBatch dream_batch_from_message(const DreamTrajectoryMessage& message, const WorldModel& model);

}  // namespace graphworld
