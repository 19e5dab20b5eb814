//===- Resharding.cpp - Collectives that change a sharding ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Planning keeps the current sharding as per-dimension axis lists and moves it
// toward the target one axis at a time:
//  1. Pending sums not in the target: reduce_scatter when the axis is exactly
//     the next one the target splits some dimension with, else all_reduce.
//  2. While some dimension's axes are not a prefix of the target's, its
//     innermost axis leaves: all_to_all when it is exactly the next axis the
//     target wants on another dimension, else all_gather.
//  3. Every dimension now holds a prefix of its target: the missing axes are
//     free all_slices.
//  4. Pending sums the target has and the value lacks: zeros off the first
//     device of each group.
// Adjacent steps of one kind (and dimension) merge into one collective.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Resharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tp;

StringRef mlir::tp::stringifyReshardStepKind(ReshardStep::Kind kind) {
  switch (kind) {
  case ReshardStep::Kind::AllReduce:
    return "all_reduce";
  case ReshardStep::Kind::ReduceScatter:
    return "reduce_scatter";
  case ReshardStep::Kind::AllGather:
    return "all_gather";
  case ReshardStep::Kind::AllToAll:
    return "all_to_all";
  case ReshardStep::Kind::AllSlice:
    return "all_slice";
  case ReshardStep::Kind::ZeroOthers:
    return "zero_others";
  }
  llvm_unreachable("unknown reshard step");
}

using AxisList = SmallVector<StringRef>;

static bool isPrefix(ArrayRef<StringRef> a, ArrayRef<StringRef> b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

static bool usedInDims(ArrayRef<AxisList> dims, StringRef axis) {
  return llvm::any_of(
      dims, [&](const AxisList &d) { return llvm::is_contained(d, axis); });
}

/// Appends `step`, merging it into the previous one when they combine.
static void push(SmallVectorImpl<ReshardStep> &steps, ReshardStep step) {
  if (!steps.empty()) {
    ReshardStep &last = steps.back();
    using Kind = ReshardStep::Kind;
    bool sameDim = last.dim == step.dim;
    if (last.kind == step.kind && step.kind == Kind::AllReduce) {
      llvm::append_range(last.axes, step.axes);
      return;
    }
    // Gathers pop innermost axes first: the merged group lists them major to
    // minor.
    if (last.kind == step.kind && step.kind == Kind::AllGather && sameDim) {
      last.axes.insert(last.axes.begin(), step.axes.begin(), step.axes.end());
      return;
    }
    if (last.kind == step.kind && step.kind == Kind::AllSlice && sameDim) {
      llvm::append_range(last.axes, step.axes);
      return;
    }
  }
  steps.push_back(std::move(step));
}

SmallVector<ReshardStep> mlir::tp::planReshard(ShardingAttr from,
                                               ShardingAttr to) {
  using Kind = ReshardStep::Kind;
  SmallVector<ReshardStep> steps;
  SmallVector<AxisList> cur, target;
  for (unsigned d = 0; d < from.getRank(); ++d) {
    cur.push_back(from.getDimAxes(d));
    target.push_back(to.getDimAxes(d));
  }
  SmallVector<StringRef> targetPartial = to.getPartialAxes();

  // 1. Pending sums the target does not keep.
  for (StringRef axis : from.getPartialAxes()) {
    if (llvm::is_contained(targetPartial, axis))
      continue;
    bool scattered = false;
    if (!usedInDims(cur, axis)) {
      for (auto [d, axes] : llvm::enumerate(cur)) {
        if (isPrefix(axes, target[d]) && axes.size() < target[d].size() &&
            target[d][axes.size()] == axis) {
          push(steps, {Kind::ReduceScatter, {axis}, static_cast<int64_t>(d)});
          axes.push_back(axis);
          scattered = true;
          break;
        }
      }
    }
    if (!scattered)
      push(steps, {Kind::AllReduce, {axis}});
  }

  // 2. Axes that leave their dimension, innermost first.
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned d = 0; d < cur.size() && !changed; ++d) {
      if (isPrefix(cur[d], target[d]))
        continue;
      StringRef axis = cur[d].pop_back_val();
      changed = true;
      bool moved = false;
      for (unsigned e = 0; e < cur.size(); ++e) {
        if (e == d || !isPrefix(cur[e], target[e]) ||
            cur[e].size() >= target[e].size() ||
            target[e][cur[e].size()] != axis)
          continue;
        push(steps, {Kind::AllToAll,
                     {axis},
                     static_cast<int64_t>(e),
                     static_cast<int64_t>(d)});
        cur[e].push_back(axis);
        moved = true;
        break;
      }
      if (!moved)
        push(steps, {Kind::AllGather, {axis}, static_cast<int64_t>(d)});
    }
  }

  // 3. Missing splits: free slices.
  for (unsigned d = 0; d < cur.size(); ++d)
    for (size_t i = cur[d].size(); i < target[d].size(); ++i) {
      push(steps, {Kind::AllSlice, {target[d][i]}, static_cast<int64_t>(d)});
      cur[d].push_back(target[d][i]);
    }

  // 4. Pending sums the target adds.
  SmallVector<StringRef> fromPartial = from.getPartialAxes();
  AxisList added;
  for (StringRef axis : targetPartial)
    if (!llvm::is_contained(fromPartial, axis))
      added.push_back(axis);
  if (!added.empty())
    steps.push_back({Kind::ZeroOthers, added});
  return steps;
}

Value mlir::tp::emitReshardSteps(OpBuilder &b, Location loc, Value local,
                                 MeshOp mesh, ArrayRef<ReshardStep> steps) {
  using Kind = ReshardStep::Kind;
  StringRef meshName = mesh.getSymName();
  for (const ReshardStep &step : steps) {
    switch (step.kind) {
    case Kind::AllReduce:
      local = AllReduceOp::create(b, loc, ReductionKind::Sum, local, meshName,
                                  step.axes)
                  .getResult();
      break;
    case Kind::ReduceScatter:
      local = ReduceScatterOp::create(b, loc, ReductionKind::Sum, local, mesh,
                                      step.axes, step.dim)
                  .getResult();
      break;
    case Kind::AllGather:
      local = AllGatherOp::create(b, loc, local, mesh, step.axes, step.dim)
                  .getResult();
      break;
    case Kind::AllToAll:
      local = AllToAllOp::create(b, loc, local, mesh, step.axes, step.dim,
                                 step.concatDim)
                  .getResult();
      break;
    case Kind::AllSlice:
      local = AllSliceOp::create(b, loc, local, mesh, step.axes, step.dim)
                  .getResult();
      break;
    case Kind::ZeroOthers: {
      auto type = cast<RankedTensorType>(local.getType());
      Value index = AxisIndexOp::create(b, loc, meshName, step.axes);
      Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          index, zeroIndex);
      SmallVector<Value> dynamicSizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          dynamicSizes.push_back(tensor::DimOp::create(b, loc, local, d));
      Value empty = tensor::EmptyOp::create(
          b, loc, type.getShape(), type.getElementType(), dynamicSizes);
      Value zero = arith::ConstantOp::create(
          b, loc, b.getZeroAttr(type.getElementType()));
      Value zeros = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
      local = arith::SelectOp::create(b, loc, first, local, zeros);
      break;
    }
    }
  }
  return local;
}
