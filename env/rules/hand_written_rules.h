// Rules written by hand: the rewrites the generator cannot reach because
// they need ops outside its menu (BatchNorm), more ops than it enumerates, or
// parameters it cannot express as literals. Each is verified like any other.
//
// Families (names are stable; a suffix gives the variant):
//   fold-conv[-bias]-batchnorm, fold-conv-transpose[-bias]-batchnorm
//                                         Conv (ConvTranspose) then BatchNorm -> one conv
//   fuse-{conv,conv-bias,matmul-rankN}-{relu,sigmoid,tanh}
//                                         activation into Conv / MatMul
//   fold-add-into-conv[-transpose]-bias   a bias written as an Add -> the conv's bias
//   merge-parallel-convs[-bias]           two convs of one input, same kernel
//   merge-parallel-convs-enlarge[-bias]   same, the smaller kernel enlarged
//   merge-parallel-matmuls-rankN          two MatMuls of one input
//   merge-grouped-convs[-concat]          two convs of two inputs -> group 2
//   cancel-transposes-rankN, compose-transposes-rankN, remove-identity-transpose-rankN
//   cancel-reshapes-rankN, compose-reshapes-rankN
//   cancel-split-concat-rankN, cancel-concat-split-rankN
// The Conv folds and fusions hold for any group count (grouped and depthwise
// convs), since they act on each output channel alone; the ConvTranspose
// folds take one group.
#pragma once

#include <vector>

#include "env/rules/rule.h"

namespace graphworld {

std::vector<Rule> hand_written_rules();

}  // namespace graphworld
